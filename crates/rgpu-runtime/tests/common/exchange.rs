//! `Collective::send_recv` and `all_to_all` on any devices (the host path on cpu devices in
//! collectives.rs, NCCL over GPUs in cuda.rs): a ring, uneven parts (some empty, each
//! rank's own part to itself), each exact; unmatched transfers refused.

use rgpu_runtime::{Buffer, Collective, Device, Transfer};

/// Rank r's elements: `len` values that say whose they are and where they were.
fn shard(r: usize, len: usize) -> Vec<u32> {
    (0..len).map(|i| (r * 1_000_000 + i) as u32).collect()
}

pub fn exchanges(devices: &[Device], group: &Collective) {
    let n = devices.len();
    // A ring: rank r sends its buffer to r + 1 and receives r - 1's; and part of a buffer
    // into part of another (elements 3..13 to 100..110).
    let len = 1000 + 17;
    let sent: Vec<Buffer<u32>> = devices
        .iter()
        .enumerate()
        .map(|(r, d)| d.upload(&shard(r, len)).unwrap())
        .collect();
    let mut got: Vec<Buffer<u32>> = devices.iter().map(|d| d.zeros(len).unwrap()).collect();
    let mut ring = Vec::new();
    for (r, b) in sent.iter().enumerate() {
        ring.push(Transfer::send(b, (r + 1) % n));
    }
    for (r, b) in got.iter_mut().enumerate() {
        ring.push(Transfer::recv(b, (r + n - 1) % n));
    }
    group.send_recv(&mut ring).unwrap();
    for (r, b) in got.iter().enumerate() {
        assert!(
            b.read().unwrap() == shard((r + n - 1) % n, len),
            "ring, rank {r}"
        );
    }
    let mut part = vec![Transfer::Send {
        buffer: &sent[n - 1],
        range: 3..13,
        to: 0,
    }];
    part.push(Transfer::Recv {
        buffer: &mut got[0],
        range: 100..110,
        from: n - 1,
    });
    group.send_recv(&mut part).unwrap();
    let back = got[0].read().unwrap();
    assert_eq!(&back[100..110], &shard(n - 1, 13)[3..]);
    assert_eq!(back[99], shard(n - 1, len)[99], "untouched");
    // Unmatched: a receive nobody sends (refused before anything moves).
    let mut lonely = vec![Transfer::recv(&mut got[0], n - 1)];
    let e = group.send_recv(&mut lonely).unwrap_err().to_string();
    assert!(e.contains("no send of rank"), "{e}");
    // All to all: rank r's part for rank q has part(r, q) elements.
    let part = |r: usize, q: usize| (r * 7 + q * 3) % 5 * 101 + usize::from(r == q);
    let counts: Vec<Vec<usize>> = (0..n)
        .map(|r| (0..n).map(|q| part(r, q)).collect())
        .collect();
    let inputs: Vec<Buffer<u32>> = devices
        .iter()
        .enumerate()
        .map(|(r, d)| d.upload(&shard(r, counts[r].iter().sum())).unwrap())
        .collect();
    // One element more than needed: it stays as it was.
    let mut outputs: Vec<Buffer<u32>> = (0..n)
        .map(|q| {
            let need: usize = (0..n).map(|r| part(r, q)).sum();
            devices[q].upload(&vec![7u32; need + 1]).unwrap()
        })
        .collect();
    group.all_to_all(&inputs, &counts, &mut outputs).unwrap();
    for (q, out) in outputs.iter().enumerate() {
        let mut want = Vec::new();
        for (r, row) in counts.iter().enumerate() {
            let start: usize = row[..q].iter().sum();
            want.extend_from_slice(&shard(r, start + part(r, q))[start..]);
        }
        want.push(7);
        assert!(out.read().unwrap() == want, "all_to_all, rank {q}");
    }
    let e = group
        .all_to_all(&inputs, &counts[1..], &mut outputs)
        .unwrap_err()
        .to_string();
    assert!(e.contains("counts must be"), "{e}");
}
