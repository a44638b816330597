"""torchvision ``resnet50`` (ResNet v1.5: the stride sits on the 3x3 convolution of a
bottleneck), trained with cross-entropy on 1000 classes."""

from .builder import GraphBuilder


__all__ = ["build_resnet50"]

IMAGE_SIZE = 224
NUM_CLASSES = 1000
STAGES = ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2))   # width, blocks, stride
EXPANSION = 4


def _bottleneck(b, name, x, in_channels, width, stride):
    out_channels = width * EXPANSION
    y = b.conv2d(f"{name}.conv1", x, width, 1)
    y = b.relu(f"{name}.relu1", b.batchnorm(f"{name}.bn1", y))
    y = b.conv2d(f"{name}.conv2", y, width, 3, stride=stride, padding=1)
    y = b.relu(f"{name}.relu2", b.batchnorm(f"{name}.bn2", y))
    y = b.conv2d(f"{name}.conv3", y, out_channels, 1)
    y = b.batchnorm(f"{name}.bn3", y)
    shortcut = x
    if stride != 1 or in_channels != out_channels:
        shortcut = b.conv2d(f"{name}.downsample.0", x, out_channels, 1, stride=stride)
        shortcut = b.batchnorm(f"{name}.downsample.1", shortcut)
    return b.relu(f"{name}.relu3", b.add(f"{name}.add", y, shortcut)), out_channels


def build_resnet50(*, batch, dtype="fp32", optimizer="sgd_momentum"):
    b = GraphBuilder("resnet50", batch=batch, dtype=dtype, optimizer=optimizer,
                     meta={"image_size": IMAGE_SIZE})
    x = b.input("images", (batch, 3, IMAGE_SIZE, IMAGE_SIZE))
    labels = b.input("labels", (batch,), "int64")
    y = b.conv2d("conv1", x, 64, 7, stride=2, padding=3)
    y = b.relu("relu", b.batchnorm("bn1", y))
    y = b.maxpool("maxpool", y, 3, 2, 1)
    channels = 64
    for stage, (width, blocks, stride) in enumerate(STAGES, start=1):
        for block in range(blocks):
            y, channels = _bottleneck(b, f"layer{stage}.{block}", y, channels, width,
                                      stride if block == 0 else 1)
    y = b.adaptive_avgpool("avgpool", y, 1, 1)
    logits = b.linear("fc", y, NUM_CLASSES, flatten=True)
    loss = b.cross_entropy("loss", logits, labels)
    return b.finish(loss, {"logits": logits})
