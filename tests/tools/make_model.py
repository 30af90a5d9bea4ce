#!/usr/bin/python3
"""make_model.py -- tiny random-weight BERT-family models in llama.cpp's
`bert` GGUF layout, for cairn's runtime tests and benchmarks (test tooling
only; Debian's /usr/bin/python3 and python3-numpy; writes through
tests/tools/gguf_writer.py).

USAGE

    make_model.py OUT.gguf [options]

    --family bert|xlmr   BERT (WordPiece vocabulary, tokenizer.ggml.model
                         "bert", 2 token types) or XLM-RoBERTa (Unigram
                         vocabulary, "t5", 1 token type); default bert
    --embd N --layers N --heads N --ff N --ctx N
                         hyper-parameters (default 64, 2, 4, 128, 64)
    --vocab N            rows of token_embd (default: the built-in word
                         list's size, >= its size; padded with "[unusedK]"
                         or "<unusedK>" tokens)
    --types MIX          weight types: f32, f16, bf16, q8_0, q4_0, q4_1,
                         q5_0, q5_1 (every matrix of that type), kmix (a
                         K-quant mix like llama.cpp's Q4_K_M: q4_K, q5_K,
                         q6_K; needs --embd and --ff multiples of 256), or
                         legacy (q4_0/q4_1/q5_0/q5_1/q8_0 spread over the
                         layers). Vectors (norms, biases) stay f32 as
                         llama.cpp writes them. Default f32.
    --pool mean|cls|last|rank|none|absent
                         bert.pooling_type (absent: no key); rank also
                         writes the classifier head cls.{weight,bias} and
                         cls.output.{weight,bias}; default mean
    --head full|out      rank head: dense+tanh+output (full, BERT/XLM-R
                         sequence classification) or cls.output only
    --qkv split|fused    attn_q/attn_k/attn_v or one attn_qkv (default split)
    --eps X              LayerNorm epsilon (default 1e-12)
    --seed N             the random seed (default 1)
    --no-vocab           no tokenizer.ggml.* metadata
    --name S             general.name (default "cairn-test-<family>")
    Malformed variants for error tests:
    --drop NAME          leave tensor NAME out
    --bad-shape NAME     write tensor NAME with one row too many
    --bad-type NAME      write tensor NAME as q2_K (a type the runtime does
                         not decode; raw bytes of the right size)
    --extra-rows N       N more token_embd rows than the vocabulary has

Weights are drawn so that activations stay O(1) through the layers
(matrices N(0, 1/in), biases N(0, 0.1^2), LayerNorm gains 1 + N(0, 0.1^2)),
which keeps softmax and GELU in their non-linear ranges.
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gguf_writer import GGUFWriter, QTYPES  # noqa: E402

# A small English WordPiece vocabulary (BERT's conventions: specials, whole
# words, ##continuations). The GGUF stores it as llama.cpp's converter
# does: whole words get the phantom space U+2581, "##" is stripped.
BERT_SPECIALS = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]']
BERT_WORDS = """the of and to a in is it that for on was with as be by this are
at from or an have not but they his her she he we you i my your can will one
all would there their what so up out if about who get which go me when make
memory agent note decision fact procedure recall store record token model
vector search query answer cache file code test build run bug fix error
database index sqlite lookup hello world fox dog quick brown jumps over lazy
. , ! ? ' " - ( ) : ; 0 1 2 3 4 5 6 7 8 9 caf é 中 文 日 本""".split()
BERT_SUBWORDS = """##s ##ed ##ing ##er ##ly ##es ##ion ##al ##e ##a ##o ##i
##n ##t ##r ##d ##l ##y ##ment ##ness""".split()

XLMR_SPECIALS = ['<s>', '<pad>', '</s>', '<unk>']
XLMR_PIECES = """▁the ▁of ▁and ▁to ▁a ▁in ▁is ▁it ▁that ▁for ▁on ▁was
▁with ▁as ▁be ▁by ▁this ▁are ▁hello ▁world ▁memory ▁agent ▁note ▁fox ▁dog
▁quick ▁brown ▁jumps ▁over ▁lazy ▁search ▁query s ed ing er ly es a e i o u
n t r d l y ▁ . , ! ? ' - 0 1 2 3 ▁café 中 文 日本 ▁中文 é""".split()


def bert_vocab(n):
    toks = BERT_SPECIALS + BERT_WORDS + BERT_SUBWORDS
    toks += ['[unused%d]' % i for i in range(max(0, n - len(toks)))]
    return toks[:max(n, len(toks))]


def phantom(tok):
    """llama.cpp's WordPiece spelling: [X] kept, ##x -> x, x -> U+2581 x."""
    if tok.startswith('[') and tok.endswith(']'):
        return tok
    if tok.startswith('##'):
        return tok[2:]
    return '\u2581' + tok


def add_bert_vocab(w, n):
    toks = bert_vocab(n)
    types = [3 if t.startswith('[') and t.endswith(']') else 1 for t in toks]
    w.add_kv('tokenizer.ggml.model', 'bert')
    w.add_kv('tokenizer.ggml.pre', 'bert-bge')
    w.add_kv('tokenizer.ggml.tokens', [phantom(t) for t in toks])
    w.add_kv('tokenizer.ggml.token_type', types, 'i32')
    w.add_kv('tokenizer.ggml.unknown_token_id', 1)
    w.add_kv('tokenizer.ggml.seperator_token_id', 3)
    w.add_kv('tokenizer.ggml.padding_token_id', 0)
    w.add_kv('tokenizer.ggml.cls_token_id', 2)
    w.add_kv('tokenizer.ggml.mask_token_id', 4)
    w.add_kv('tokenizer.ggml.add_bos_token', True)
    w.add_kv('tokenizer.ggml.add_eos_token', True)
    w.add_kv('tokenizer.ggml.bos_token_id', 2)
    w.add_kv('tokenizer.ggml.eos_token_id', 3)
    return len(toks)


def xlmr_vocab(n):
    toks = XLMR_SPECIALS + XLMR_PIECES
    toks += ['<unused%d>' % i for i in range(max(0, n - len(toks) - 1))]
    return toks + ['<mask>']


def add_xlmr_vocab(w, n):
    toks = xlmr_vocab(n)
    # scores: specials 0, pieces decreasing log-probabilities, unused low
    scores, types = [], []
    for i, t in enumerate(toks):
        if t in XLMR_SPECIALS or t == '<mask>':
            scores.append(0.0)
            types.append(2 if t == '<unk>' else 3)
        elif t.startswith('<unused'):
            scores.append(-100.0)
            types.append(5)
        else:
            scores.append(-1.0 - 0.1 * i)
            types.append(1)
    types[-1] = 4  # <mask> is user-defined in XLM-R GGUFs
    w.add_kv('tokenizer.ggml.model', 't5')
    w.add_kv('tokenizer.ggml.pre', 'default')
    w.add_kv('tokenizer.ggml.tokens', toks)
    w.add_kv('tokenizer.ggml.scores', scores, 'f32')
    w.add_kv('tokenizer.ggml.token_type', types, 'i32')
    w.add_kv('tokenizer.ggml.add_space_prefix', True)
    w.add_kv('tokenizer.ggml.remove_extra_whitespaces', True)
    w.add_kv('tokenizer.ggml.bos_token_id', 0)
    w.add_kv('tokenizer.ggml.eos_token_id', 2)
    w.add_kv('tokenizer.ggml.unknown_token_id', 3)
    w.add_kv('tokenizer.ggml.seperator_token_id', 2)
    w.add_kv('tokenizer.ggml.padding_token_id', 1)
    w.add_kv('tokenizer.ggml.cls_token_id', 0)
    w.add_kv('tokenizer.ggml.mask_token_id', len(toks) - 1)
    w.add_kv('tokenizer.ggml.add_bos_token', True)
    w.add_kv('tokenizer.ggml.add_eos_token', True)
    return len(toks)


# K-quant mix by tensor role (after llama.cpp's Q4_K_M choices)
KMIX = {'attn_q': 'q4_K', 'attn_k': 'q4_K', 'attn_v': 'q6_K',
        'attn_qkv': 'q5_K', 'attn_output': 'q5_K', 'ffn_up': 'q4_K',
        'ffn_down': 'q6_K', 'token_embd': 'q4_K', 'position_embd': 'f16',
        'token_types': 'f32', 'cls': 'q8_0', 'cls.output': 'f16'}
LEGACY = ['q4_0', 'q4_1', 'q5_0', 'q5_1', 'q8_0']


def matrix_type(mix, role, index):
    """The GGUF type of a 2-D tensor of this role (index: a running count)."""
    if mix == 'kmix':
        return KMIX.get(role, 'q8_0')
    if role == 'token_types':
        return 'f32'  # as llama.cpp's quantize leaves it (its CPU add needs f32)
    if mix == 'legacy':
        if role == 'position_embd':
            return 'f16'
        return LEGACY[index % len(LEGACY)]
    if mix in ('q8_0', 'q4_0', 'q4_1', 'q5_0', 'q5_1'):
        # the embedding tables as llama.cpp's quantize leaves them
        if role == 'position_embd':
            return 'f16'
        if role == 'token_embd':
            return 'q8_0'
        return mix
    return mix  # f32, f16, bf16


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('out')
    ap.add_argument('--family', default='bert', choices=['bert', 'xlmr'])
    ap.add_argument('--embd', type=int, default=64)
    ap.add_argument('--layers', type=int, default=2)
    ap.add_argument('--heads', type=int, default=4)
    ap.add_argument('--ff', type=int, default=128)
    ap.add_argument('--ctx', type=int, default=64)
    ap.add_argument('--vocab', type=int, default=0)
    ap.add_argument('--types', default='f32',
                    choices=['f32', 'f16', 'bf16', 'q8_0', 'q4_0', 'q4_1',
                             'q5_0', 'q5_1', 'kmix', 'legacy'])
    ap.add_argument('--pool', default='mean',
                    choices=['mean', 'cls', 'last', 'rank', 'none',
                             'absent'])
    ap.add_argument('--head', default='full', choices=['full', 'out'])
    ap.add_argument('--qkv', default='split', choices=['split', 'fused'])
    ap.add_argument('--eps', type=float, default=1e-12)
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--no-vocab', action='store_true')
    ap.add_argument('--name', default=None)
    ap.add_argument('--drop', action='append', default=[])
    ap.add_argument('--bad-shape', action='append', default=[])
    ap.add_argument('--bad-type', action='append', default=[])
    ap.add_argument('--extra-rows', type=int, default=0)
    a = ap.parse_args(argv)

    E, F, H, NL, C = a.embd, a.ff, a.heads, a.layers, a.ctx
    rng = np.random.default_rng(a.seed)
    w = GGUFWriter(a.out, 'bert')
    w.add_kv('general.name', a.name or 'cairn-test-' + a.family)
    w.add_kv('general.type', 'model')
    w.add_kv('bert.context_length', C)
    w.add_kv('bert.embedding_length', E)
    w.add_kv('bert.feed_forward_length', F)
    w.add_kv('bert.attention.head_count', H)
    w.add_kv('bert.attention.layer_norm_epsilon', a.eps)
    w.add_kv('bert.block_count', NL)
    w.add_kv('bert.attention.causal', False)
    pools = {'none': 0, 'mean': 1, 'cls': 2, 'last': 3, 'rank': 4}
    if a.pool != 'absent':
        w.add_kv('bert.pooling_type', pools[a.pool], 'u32')
    n_types = 2 if a.family == 'bert' else 1
    w.add_kv('tokenizer.ggml.token_type_count', n_types)
    if a.no_vocab:
        n_vocab = a.vocab or len(bert_vocab(0))
    elif a.family == 'bert':
        n_vocab = add_bert_vocab(w, a.vocab)
    else:
        n_vocab = add_xlmr_vocab(w, a.vocab)
    if a.pool == 'rank':
        w.add_kv('bert.classifier.output_labels', ['LABEL_0'])

    count = [0]

    def tensor(name, shape, role=None, scale=1.0, offset=0.0):
        """Draw, type and write one tensor (or its malformed variant)."""
        if name in a.drop:
            return
        if name in a.bad_shape:
            shape = (shape[0] + 1,) + tuple(shape[1:])
        x = (offset + scale * rng.standard_normal(shape)).astype(np.float32)
        if len(shape) == 1:
            qt = 'f32'
        else:
            qt = matrix_type(a.types, role, count[0])
            count[0] += 1
        if name in a.bad_type:
            # q2_K: 256 elements in 84 bytes; ne[0] is padded up if needed
            ne = list(reversed(shape))
            ne[0] = (ne[0] + 255) // 256 * 256
            n = 1
            for d in ne:
                n *= d
            w.add_tensor_raw(name, bytes(n // 256 * 84), ne, 10)
            return
        # ggml needs whole blocks per row: fall back like llama.cpp does
        blk = QTYPES[qt][1]
        if shape[-1] % blk:
            qt = 'q8_0' if shape[-1] % 32 == 0 else 'f16'
        w.add_tensor(name, x, qt)

    s_in = 1.0 / np.sqrt(E)
    tensor('token_embd.weight', (n_vocab + a.extra_rows, E), 'token_embd',
           0.5)
    tensor('token_types.weight', (n_types, E), 'token_types', 0.5)
    tensor('position_embd.weight', (C, E), 'position_embd', 0.5)
    tensor('token_embd_norm.weight', (E,), None, 0.1, 1.0)
    tensor('token_embd_norm.bias', (E,), None, 0.1)
    for i in range(NL):
        p = 'blk.%d.' % i
        if a.qkv == 'fused':
            tensor(p + 'attn_qkv.weight', (3 * E, E), 'attn_qkv', s_in)
            tensor(p + 'attn_qkv.bias', (3 * E,), None, 0.1)
        else:
            for r in ('q', 'k', 'v'):
                tensor(p + 'attn_%s.weight' % r, (E, E), 'attn_' + r, s_in)
                tensor(p + 'attn_%s.bias' % r, (E,), None, 0.1)
        tensor(p + 'attn_output.weight', (E, E), 'attn_output', s_in)
        tensor(p + 'attn_output.bias', (E,), None, 0.1)
        tensor(p + 'attn_output_norm.weight', (E,), None, 0.1, 1.0)
        tensor(p + 'attn_output_norm.bias', (E,), None, 0.1)
        tensor(p + 'ffn_up.weight', (F, E), 'ffn_up', s_in)
        tensor(p + 'ffn_up.bias', (F,), None, 0.1)
        tensor(p + 'ffn_down.weight', (E, F), 'ffn_down', 1.0 / np.sqrt(F))
        tensor(p + 'ffn_down.bias', (E,), None, 0.1)
        tensor(p + 'layer_output_norm.weight', (E,), None, 0.1, 1.0)
        tensor(p + 'layer_output_norm.bias', (E,), None, 0.1)
    if a.pool == 'rank':
        if a.head == 'full':
            tensor('cls.weight', (E, E), 'cls', s_in)
            tensor('cls.bias', (E,), None, 0.1)
        tensor('cls.output.weight', (1, E), 'cls.output', s_in)
        tensor('cls.output.bias', (1,), None, 0.1)
    w.write()
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
