"""model.py - the MLP of the samples: 784-120-84-10, with the relu given."""
import torch
from torch import nn


class MLP(nn.Module):
    def __init__(self, relu, input_size=28 * 28, output_size=10, layers=(120, 84)):
        super().__init__()
        self.relu = relu
        self.fc1 = nn.Linear(input_size, layers[0])
        self.fc2 = nn.Linear(layers[0], layers[1])
        self.fc3 = nn.Linear(layers[1], output_size)

    def forward(self, x):
        x = self.relu(self.fc1(x))
        x = self.relu(self.fc2(x))
        return torch.log_softmax(self.fc3(x), dim=1)
