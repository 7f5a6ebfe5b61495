"""A tiny Qwen2-VL built on the spot (nothing downloaded), for trainers to train on an export:
a byte-level BPE tokenizer trained on the export's own text (digits split one by one, as
Qwen's tokenizer does), Qwen's chat template with its vision tokens, the real
``Qwen2VLImageProcessor`` with the hub models' pixel limits (so screenshots cost what they
cost a real Qwen2.5-VL) and a two-layer model.

Run with the trainer venv's python (scripts/bootstrap-train.sh); ``build(texts)`` returns
(model, processor).
"""

from __future__ import annotations

from collections.abc import Iterable

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>", "<|image_pad|>",
           "<|video_pad|>"]
CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for part in message['content'] %}{% if part['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}{% endfor %}{% endif %}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
# The hub processors of Qwen2-VL / Qwen2.5-VL (preprocessor_config.json)
MIN_PIXELS, MAX_PIXELS = 3136, 12845056


def tokenizer_from(texts: Iterable[str], vocab_size: int = 4000):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True),
                                                 pre_tokenizers.ByteLevel(add_prefix_space=False)])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIAL,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(texts, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                   additional_special_tokens=SPECIAL[3:], chat_template=CHAT_TEMPLATE)


def _image_only():
    from transformers import Qwen2VLProcessor

    class ImageOnlyQwen2VLProcessor(Qwen2VLProcessor):
        """Qwen2-VL's processor without a video processor: the CPU trainer venv has no
        torchvision (its CPU wheel is not on this machine), and transformers checks a
        missing video processor against a class that needs it."""

        def check_argument_for_proper_class(self, argument_name, argument):
            if argument_name == "video_processor" and argument is None:
                return None
            return super().check_argument_for_proper_class(argument_name, argument)

    return ImageOnlyQwen2VLProcessor


def build(texts: Iterable[str]):
    from transformers import (
        Qwen2VLConfig,
        Qwen2VLForConditionalGeneration,
        Qwen2VLImageProcessor,
    )

    _ImageOnly = _image_only()
    tokenizer = tokenizer_from(texts)
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in SPECIAL}
    image_processor = Qwen2VLImageProcessor(min_pixels=MIN_PIXELS, max_pixels=MAX_PIXELS)
    processor = _ImageOnly(image_processor=image_processor, tokenizer=tokenizer, chat_template=CHAT_TEMPLATE)
    config = Qwen2VLConfig(
        text_config={"vocab_size": len(tokenizer), "hidden_size": 64, "intermediate_size": 128,
                     "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                     "max_position_embeddings": 4096, "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0,
                                                                         "mrope_section": [4, 2, 2]},
                     "bos_token_id": ids["<|endoftext|>"], "eos_token_id": ids["<|im_end|>"],
                     "pad_token_id": ids["<|endoftext|>"]},
        vision_config={"depth": 2, "embed_dim": 32, "hidden_size": 64, "num_heads": 2, "mlp_ratio": 2,
                       "patch_size": 14, "spatial_merge_size": 2, "temporal_patch_size": 2},
        image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"], vision_end_token_id=ids["<|vision_end|>"],
    )
    model = Qwen2VLForConditionalGeneration(config)
    return model, processor
