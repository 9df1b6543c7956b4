"""An independent MACKO decoder, written from the format's description (SPEC.md,
macko-compress(1)), not from spkit's C: checks a file's layout and gives back
the dense fp16 matrix, each row's stored elements, and A x computed from them.

    macko_decode.py MATRIX.npz DENSE.npy    writes the dense matrix

The column of element j of a row is j plus the sum of the row's deltas up to
and including j; element i's delta is in byte i // 2, the low nibble for even i.
"""
import sys

import numpy as np


def load(path):
    """The four arrays, after checking their dtypes, shapes and padding."""
    z = np.load(path)
    assert sorted(z.files) == ['deltas', 'row_indices', 'shape', 'values'], z.files
    values, deltas, ri, shape = (z[k] for k in ('values', 'deltas', 'row_indices', 'shape'))
    assert values.dtype == np.float16 and values.ndim == 1, values.dtype
    assert deltas.dtype == np.uint8 and deltas.ndim == 1, deltas.dtype
    assert ri.dtype == np.int32 and ri.ndim == 1, ri.dtype
    assert shape.dtype == np.int64 and shape.shape == (2,), (shape.dtype, shape.shape)
    rows, cols = (int(s) for s in shape)
    assert len(ri) == rows + 1, (len(ri), rows)
    assert len(values) % 8 == 0 and len(deltas) % 4 == 0, (len(values), len(deltas))
    assert len(deltas) * 2 == len(values), (len(deltas), len(values))
    assert ri[0] == 0 and np.all(np.diff(ri) >= 0), ri
    stored = int(ri[-1])
    assert len(values) - 8 < stored <= len(values) or stored == len(values) == 0, \
        (stored, len(values))
    # the padding is zero
    assert not np.any(values[stored:].view(np.uint16)), 'values padding is not zero'
    nibbles = np.empty(2 * len(deltas), dtype=np.int64)
    nibbles[0::2] = deltas & 0xf
    nibbles[1::2] = deltas >> 4
    assert not np.any(nibbles[stored:]), 'deltas padding is not zero'
    return rows, cols, values, nibbles, ri


def stored(path):
    """Per row, the stored elements: (columns, values), explicit zeros included."""
    rows, cols, values, nibbles, ri = load(path)
    out = []
    for r in range(rows):
        a, b = int(ri[r]), int(ri[r + 1])
        c = np.arange(b - a) + np.cumsum(nibbles[a:b])
        assert np.all(c < cols), f'row {r}: column {c.max()} of {cols}'
        v = values[a:b]
        # stored zeros are only the 16th zero of a run, and rows are trimmed
        assert np.all((v != 0) | (nibbles[a:b] == 15)), f'row {r}: a needless stored zero'
        assert b == a or v[-1] != 0, f'row {r}: trailing stored zero'
        out.append((c, v))
    return out


def decode(path):
    """The dense f2 matrix (+0 for every zero)."""
    shape = tuple(int(s) for s in np.load(path)['shape'])
    dense = np.zeros(shape, dtype=np.float16)
    for r, (c, v) in enumerate(stored(path)):
        dense[r, c] = v
    dense[dense == 0] = 0
    return dense


def multiply(path, x):
    """A x over the stored elements, in float64: x is (cols,) or (N, cols)."""
    x = np.asarray(x, dtype=np.float64)
    y = [x[..., c] @ v.astype(np.float64) for c, v in stored(path)]
    return np.stack(y, axis=-1) if y else np.zeros(x.shape[:-1] + (0,))


if __name__ == '__main__':
    np.save(sys.argv[2], decode(sys.argv[1]))
