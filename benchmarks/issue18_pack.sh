set -eux
export PATH=/work/main/.venv/bin:$PATH
P=/work/main/.bench18; rm -rf $P; mkdir -p $P
newest() { ls -t target/release/deps/"$1"-* | grep -v '\.d$' | head -1; }
cd /work/scratch2/h100demo
time rgpu build --backend cuda,wgpu,ash --arch sm_90 --yes
cp target/release/h100demo target/release/examples/bench $P/
cp "$(newest parity)" $P/parity
cp target/rgpu/kernels/manifest.json $P/manifest-demo.json
cd /work/scratch2/h100sax
time rgpu build --backend cuda,wgpu,ash --arch sm_90 --yes
cp target/release/h100sax $P/saxpy
cp "$(newest parity)" $P/saxparity
strip $P/h100demo $P/bench $P/parity $P/saxpy $P/saxparity || true
ls -la $P; du -sh $P
