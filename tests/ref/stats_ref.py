# Reference values for tests/unit/test_stats.c (scipy_* cases), computed with
# scipy, independent of the C code: Kruskal-Wallis and Spearman by scipy.stats,
# Dunn (tie-corrected SE) from scipy.stats.rankdata and norm.sf, Holm and BH
# step-down/step-up by hand. Run: python3 tests/ref/stats_ref.py ../shared
# (Debian bookworm python3-scipy 1.10.1, numpy 1.24); CI needs none of it.
import csv, scipy.stats as st, numpy as np
import os, sys
T=os.path.join(sys.argv[1] if len(sys.argv) > 1 else '../shared', 'data/paper-tables/')
r=list(csv.DictReader(open(T+'table6_headline_pfi.csv')))
x=[float(a['pfi']) for a in r]
g=[0 if a['arch']!='moe' else (2 if a['task']=='ft' else 1) for a in r]
by=[[v for v,k in zip(x,g) if k==j] for j in range(3)]
H,p=st.kruskal(*by); print('kruskal', repr(H), repr(p))
rk=st.rankdata(x); N=len(x); tc=sum(t**3-t for t in np.unique(x,return_counts=True)[1])
mr=[np.mean([rk[i] for i in range(N) if g[i]==j]) for j in range(3)]
n=[len(b) for b in by]
pairs=[(0,1),(0,2),(1,2)]; z=[];pr=[]
for a,b in pairs:
    se=np.sqrt((N*(N+1)/12 - tc/(12*(N-1)))*(1/n[a]+1/n[b]))
    zz=(mr[a]-mr[b])/se; z.append(zz); pr.append(2*st.norm.sf(abs(zz)))
o=np.argsort(pr); m=3; holm=[0]*3; run=0
for j,i in enumerate(o):
    run=max(run,min(1,(m-j)*pr[i])); holm[i]=run
o=o[::-1]; bh=[0]*3; run=1
for j,i in zip(range(m,0,-1),o):
    run=min(run,min(1,m*pr[i]/j)); bh[i]=run
for k in range(3): print('dunn', pairs[k], repr(z[k]), repr(pr[k]), repr(holm[k]), repr(bh[k]))
t8=list(csv.DictReader(open(T+'table8_h100_vs_h200.csv')))
rho,p=st.spearmanr([float(a['pfi_h200']) for a in t8],[float(a['pfi_h100']) for a in t8]); print('spearman8',repr(rho),repr(p))
rho,p=st.spearmanr(x,[float(a['gpus']) for a in r]); print('spearman6_gpus',repr(rho),repr(p))
