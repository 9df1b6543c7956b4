# Shared by macko-compress.bats and macko-spmv.bats: matrices made with
# NumPy, Python with the independent decoder (ref/macko_decode.py) importable,
# and broken MACKO files.
load helpers

C=macko-compress
S=macko-spmv

pyref() { # $PY with tests/bats/ref on the module path
	PYTHONPATH="$REPO/tests/bats/ref" $PY "$@"
}

# random_npy FILE ROWS COLS DENSITY [DTYPE [SEED]]: normal values, about
# DENSITY of them nonzero.
random_npy() {
	$PY -c "
import numpy as np
rng = np.random.default_rng(${6:-1})
a = rng.standard_normal(($2, $3))
a[rng.random(a.shape) >= $4] = 0
np.save('$1', a.astype('${5:-f2}'))"
}

# macko_variants GOOD.npz DIR: broken copies of a MACKO file in DIR, one per
# problem (see the names). GOOD has two rows or more, and row 0 ends with
# nonzeros in its last two columns.
macko_variants() {
	pyref - "$1" "$2" <<'PY'
import sys
import numpy as np
good, out = sys.argv[1], sys.argv[2]
g = dict(np.load(good))
ri = g['row_indices']
def save(name, **change):
    d = dict(g)
    for k, v in change.items():
        if v is None:
            del d[k]
        else:
            d[k] = v
    np.savez(f'{out}/{name}.npz', **d)
save('no-deltas', deltas=None)
save('no-shape', shape=None)
save('f4-values', values=g['values'].astype(np.float32))
r = ri.copy(); r[1], r[2] = r[2], r[1]
save('decreasing', row_indices=r)
r = ri.copy(); r[-1] = len(g['values']) + 8
save('past-values', row_indices=r)
save('short-values', values=g['values'][:-8])
save('short-deltas', deltas=g['deltas'][:-4])
k = int(ri[1]) - 1  # row 0's last element: its delta to 15 pushes it past the last column
d = g['deltas'].copy(); d[k // 2] |= 0xf << 4 * (k % 2)
save('past-column', deltas=d)
save('short-shape', shape=np.array([len(ri) - 2, g['shape'][1]]))
save('float-shape', shape=g['shape'].astype(np.float64))
PY
}
