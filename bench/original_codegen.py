"""original_codegen.py - THE BASELINE OF BENCH CASE 5, NOT PART OF THE PROJECT.

A reimplementation, for timing only, of the wrapper generation of the
Neuron SDK's build_custom_op.py as its documentation describes it
(_parse_schema, _wrapper_gen, _create_wrapper): the same find/split scanner
of each schema, the same per-op string building and the same wrapper.cpp
text, written with one write.  bench.py checks that its output is byte for
byte the text build-custom-op --emit-wrapper writes for the same ops, so the
two do the same work.

    python3 original_codegen.py OUT FN SCHEMA [FN SCHEMA ...]

The timing includes starting the interpreter, as a caller of the original
pays it; the ops come on the command line as they do for build-custom-op.
"""
import os
import sys


def _parse_schema(schema):
    """(arg_types, ret_types) of 'ns::name(T a, ...) -> (T r, ...)': the
    original's scanner, which splits at ', ' and at single spaces."""
    sep = schema.find('::')
    if sep == -1:
        raise Exception(f'Could not find namespace separator "::" in schema: {schema}')
    namespace = schema[:sep]  # noqa: F841 (parsed and discarded, as in the original)
    paren = schema.find('(', sep)
    if paren == -1:
        raise Exception(f'Could not find "(" for args in schema: {schema}')
    name = schema[sep + 2:paren]  # noqa: F841
    cparen = schema.find(')', paren)
    if cparen == -1:
        raise Exception(f'Could not find ")" for args in schema: {schema}')
    args = schema[paren + 1:cparen]
    arg_types = []
    for arg in args.split(', '):
        split_arg = arg.split(' ')
        if len(split_arg) != 2:
            raise Exception(f'Found more than 2 entries for a single arg: {arg}')
        arg_types.append(split_arg[0])
    rparen = schema.find('(', cparen)
    if rparen == -1:
        raise Exception(f'Could not find "(" for returns in schema: {schema}')
    rcparen = schema.find(')', rparen)
    if rcparen == -1:
        raise Exception(f'Could not find ")" for returns in schema: {schema}')
    rets = schema[rparen + 1:rcparen]
    ret_types = []
    for ret in rets.split(', '):
        split_ret = ret.split(' ')
        if len(split_ret) != 2:
            raise Exception(f'Found more than 2 entries for a single return: {ret}')
        ret_types.append(split_ret[0])
    return arg_types, ret_types


def _wrapper_gen(funcname, args, ret):
    """The forward declaration, <fn>_wrapper() and <fn>_stack_switch() of one op."""
    comb_args = ''
    for i, arg in enumerate(args):
        if i > 0:
            comb_args += ', '
        if arg == 'Tensor':
            comb_args += 'const at::Tensor&'
        elif arg == 'Scalar' or arg == 'number':
            comb_args += 'const at::Scalar&'
        elif arg == 'int':
            comb_args += 'int'
        elif arg == 'float':
            comb_args += 'float'
        elif arg == 'long long':
            comb_args += 'long long'
        else:
            raise Exception(f'Unsupported argument type: {arg}')
    if len(ret) != 1:
        raise Exception('CustomOp currently only supports a single return value')
    if ret[0] != 'Tensor':
        raise Exception('CustomOp currently only supports Tensor return types')
    ret_type = 'at::Tensor'

    wrapper = f'{ret_type} {funcname}({comb_args});\n\n'
    wrapper += f'void {funcname}_wrapper() {{\n'
    wrapper += '    customop_setup(true);\n'
    wrapper += f'    {ret_type} output = {funcname}('
    for i, arg in enumerate(args):
        if i > 0:
            wrapper += ', '
        if arg == 'Tensor':
            wrapper += 'customop_next_tensor()'
        elif arg == 'Scalar' or arg == 'number':
            wrapper += 'customop_next_scalar()'
        elif arg == 'int':
            wrapper += 'customop_next_int()'
        elif arg == 'float':
            wrapper += 'customop_next_float()'
        elif arg == 'long long':
            wrapper += 'customop_next_longlong()'
    wrapper += ');\n'
    wrapper += '    customop_return_tensor(output);\n'
    wrapper += '    customop_cleanup();\n'
    wrapper += '    if (switched_stack)\n'
    wrapper += '        asm("j switchBack");\n'
    wrapper += '}\n\n'
    wrapper += f'int {funcname}_stack_switch() {{\n'
    wrapper += f'    return switch_stack_or_call_wrapper((uint32_t){funcname}_wrapper);\n'
    wrapper += '}\n\n'
    return wrapper


def _create_wrapper(schemas, funcs, build_directory):
    """Writes build_directory/wrapper.cpp (here: the path given) for the ops."""
    wrapper = '// WARNING: AUTO GENERATED DO NOT EDIT\n'
    wrapper += '#include "neuron/wrapper_api.h"\n\n'
    for schema, funcname in zip(schemas, funcs):
        if len(funcname) >= 32:
            raise Exception(f'CustomOp function name is too long: {funcname}. '
                            'Must be less than 32 characters.')
        args, ret = _parse_schema(schema)
        wrapper += _wrapper_gen(funcname, args, ret)
    wrapper += f'int get_func_cnt() {{ return {len(funcs)}; }}\n\n'
    wrapper += 'char const* get_func_name(int idx) {\n'
    wrapper += '    switch (idx) {\n'
    for i, funcname in enumerate(funcs):
        wrapper += f'        case {i}: return "{funcname}";\n'
    wrapper += '        default: return "error";\n'
    wrapper += '    }\n}\n\n'
    wrapper += 'wrapper_fn get_func_ptr(int idx) {\n'
    wrapper += '    switch (idx) {\n'
    for i, funcname in enumerate(funcs):
        wrapper += f'        case {i}: return {funcname}_stack_switch;\n'
    wrapper += '        default: return 0;\n'
    wrapper += '    }\n}\n'
    path = build_directory
    with open(path, 'w') as f:
        f.write(wrapper)
    return path


def main(argv):
    if len(argv) < 3 or len(argv) % 2 != 1:
        sys.stderr.write('usage: original_codegen.py OUT FN SCHEMA [FN SCHEMA ...]\n')
        return 2
    funcs = argv[1::2]
    schemas = argv[2::2]
    _create_wrapper(schemas, funcs, os.path.abspath(argv[0]))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
