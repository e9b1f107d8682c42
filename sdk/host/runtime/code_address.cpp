/* code_address.cpp - naming the function a code address lies in, for
 * messages ("allocated by tcm_malloc in relu(at::Tensor const&)"). */
#include <cxxabi.h>
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>

#include "runtime.h"

namespace neuron_host {

void describe_code_address(const void *address, char *text, size_t size)
{
    if (size > 0)
        text[0] = '\0';
    Dl_info info;
    void *entry = nullptr;
    if (!address || !dladdr1(address, &info, &entry, RTLD_DL_SYMENT) || !info.dli_sname || !info.dli_saddr || !entry)
        return;
    const ElfW(Sym) *symbol = static_cast<const ElfW(Sym) *>(entry);
    // dladdr gives the nearest exported symbol below the address; it names
    // the function only when the address lies inside it (a static
    // function's code lies after some other symbol).
    const char *start = static_cast<const char *>(info.dli_saddr);
    const char *at = static_cast<const char *>(address);
    if (at < start || static_cast<size_t>(at - start) >= symbol->st_size)
        return;
    int status = -1;
    char *readable = abi::__cxa_demangle(info.dli_sname, nullptr, nullptr, &status);
    snprintf(text, size, " in %s", status == 0 && readable ? readable : info.dli_sname);
    free(readable);
}

} // namespace neuron_host
