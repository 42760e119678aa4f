import transformers


def forward(self, hidden_states, attention_mask=None, position_ids=None, **kwargs):
    raise NotImplementedError("the FlashAttention forward goes here")


def replace_llama_attn_with_flash_attn():
    transformers.models.llama.modeling_llama.LlamaAttention.forward = forward
