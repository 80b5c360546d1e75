"""ResNet-18, one training step: the graph of a real vision model, grouped by module.

The network is torchvision's ``resnet18`` written out in plain ``torch.nn``, with
the same module names (conv1, bn1, layer1.0.conv1, ..., fc), so the picture's
module clusters read as in torchvision. ``gradtrace run examples/resnet18.py
--html out.html`` steps through it; each step's picture is folded to a size a
browser shows at once, with one box per module that was collapsed.
"""
import torch
from torch import nn


class BasicBlock(nn.Module):
    """Two 3x3 convolutions and a shortcut (a 1x1 convolution when the shape changes)."""

    def __init__(self, inplanes, planes, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = None
        if stride != 1 or inplanes != planes:
            self.downsample = nn.Sequential(nn.Conv2d(inplanes, planes, 1, stride, bias=False),
                                            nn.BatchNorm2d(planes))

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + identity)


class ResNet18(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = nn.Sequential(BasicBlock(64, 64), BasicBlock(64, 64))
        self.layer2 = nn.Sequential(BasicBlock(64, 128, 2), BasicBlock(128, 128))
        self.layer3 = nn.Sequential(BasicBlock(128, 256, 2), BasicBlock(256, 256))
        self.layer4 = nn.Sequential(BasicBlock(256, 512, 2), BasicBlock(512, 512))
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(512, num_classes)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


torch.manual_seed(0)
model = ResNet18()
images = torch.randn(2, 3, 32, 32)
labels = torch.tensor([3, 7])
logits = model(images)
loss = nn.functional.cross_entropy(logits, labels)
loss.backward()
print(loss.grad_fn.name(), tuple(model.fc.weight.grad.shape))
print(sum(p.numel() for p in model.parameters()), "parameters")
