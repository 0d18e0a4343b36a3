//! Copy coalescing of function-local variables (rule 4 of the flattening, see flatten.rs).
//!
//! After the element-wise rewrite, rust-gpu's value-array chains read
//!
//! ```text
//! q = <value>;            // s_i: a whole store, at the top of a block
//! if c { q[0] = x; }
//! let e = q;              // s_j: the load
//! p = e;                  // s_k: the copy
//! if c2 { p[1] = y; }
//! let f = p; ...
//! ```
//!
//! one whole-array copy per step. When, in one block, every reference to `q` anywhere in
//! the function lies in the statements `s_i ..= s_j` (so `q`'s value is dead after the load
//! and is re-made by `s_i` before any later read, loops included) and every reference to `p`
//! lies in `s_k ..` (so `p` is made by the copy and dead outside the rest of the block), `p`
//! and `q` never hold live values at the same time: `p` is renamed to `q` and the copy,
//! now `q = q`, is dropped. Functions with a statement or expression this pass does not
//! know to leave locals alone (calls, ray queries, cooperative matrices) are skipped.

use std::collections::HashMap;

use naga::{Arena, Block, Expression, Handle, LocalVariable, Statement};

type Counts = HashMap<Handle<LocalVariable>, usize>;

pub struct Coalescer<'a> {
    pub locals: &'a Arena<LocalVariable>,
    pub expressions: &'a mut Arena<Expression>,
    /// References per local in the whole function (kept up to date across renames).
    function: Counts,
    pub merged: usize,
}

/// Coalesces copies in `body` (the function's body) and returns how many; 0 when the
/// function has a statement or expression the pass does not handle.
pub fn coalesce(
    locals: &Arena<LocalVariable>,
    expressions: &mut Arena<Expression>,
    body: &mut Block,
) -> usize {
    let mut function = Counts::new();
    if !count_block(expressions, body, &mut function) {
        return 0;
    }
    let mut c = Coalescer {
        locals,
        expressions,
        function,
        merged: 0,
    };
    c.block(body);
    c.merged
}

/// Adds the local-variable references of `block` to `counts`; false for anything unknown.
fn count_block(expressions: &Arena<Expression>, block: &Block, counts: &mut Counts) -> bool {
    block
        .iter()
        .all(|s| count_statement(expressions, s, counts))
}

fn count_operand(
    expressions: &Arena<Expression>,
    operand: Handle<Expression>,
    counts: &mut Counts,
) {
    if let Expression::LocalVariable(l) = expressions[operand] {
        *counts.entry(l).or_default() += 1;
    }
}

fn count_statement(
    expressions: &Arena<Expression>,
    statement: &Statement,
    counts: &mut Counts,
) -> bool {
    match *statement {
        Statement::Emit(ref range) => {
            for h in range.clone() {
                match expressions[h] {
                    Expression::Load { pointer: p }
                    | Expression::Access { base: p, .. }
                    | Expression::AccessIndex { base: p, .. }
                    | Expression::ArrayLength(p) => count_operand(expressions, p, counts),
                    Expression::RayQueryVertexPositions { .. }
                    | Expression::RayQueryGetIntersection { .. }
                    | Expression::CooperativeLoad { .. }
                    | Expression::CooperativeMultiplyAdd { .. } => return false,
                    _ => {}
                }
            }
            true
        }
        Statement::Store { pointer, .. }
        | Statement::Atomic { pointer, .. }
        | Statement::WorkGroupUniformLoad { pointer, .. } => {
            count_operand(expressions, pointer, counts);
            true
        }
        Statement::Block(ref b) => count_block(expressions, b, counts),
        Statement::If {
            ref accept,
            ref reject,
            ..
        } => count_block(expressions, accept, counts) && count_block(expressions, reject, counts),
        Statement::Switch { ref cases, .. } => cases
            .iter()
            .all(|case| count_block(expressions, &case.body, counts)),
        Statement::Loop {
            ref body,
            ref continuing,
            ..
        } => count_block(expressions, body, counts) && count_block(expressions, continuing, counts),
        Statement::Break
        | Statement::Continue
        | Statement::Return { .. }
        | Statement::Kill
        | Statement::ControlBarrier(_)
        | Statement::MemoryBarrier(_)
        | Statement::ImageStore { .. }
        | Statement::ImageAtomic { .. }
        | Statement::SubgroupBallot { .. }
        | Statement::SubgroupGather { .. }
        | Statement::SubgroupCollectiveOperation { .. } => true,
        _ => false,
    }
}

impl Coalescer<'_> {
    fn local_of(&self, pointer: Handle<Expression>) -> Option<Handle<LocalVariable>> {
        match self.expressions[pointer] {
            Expression::LocalVariable(l) => Some(l),
            _ => None,
        }
    }

    fn block(&mut self, block: &mut Block) {
        for statement in block.iter_mut() {
            match *statement {
                Statement::Block(ref mut b) => self.block(b),
                Statement::If {
                    ref mut accept,
                    ref mut reject,
                    ..
                } => {
                    self.block(accept);
                    self.block(reject);
                }
                Statement::Switch { ref mut cases, .. } => {
                    for case in cases.iter_mut() {
                        self.block(&mut case.body);
                    }
                }
                Statement::Loop {
                    ref mut body,
                    ref mut continuing,
                    ..
                } => {
                    self.block(body);
                    self.block(continuing);
                }
                _ => {}
            }
        }
        while let Some(k) = self.one_copy(block) {
            block.cull(k..=k);
        }
    }

    /// Finds one copy to coalesce in `block`, renames, and returns the copy's index.
    fn one_copy(&mut self, block: &Block) -> Option<usize> {
        let per: Vec<Counts> = block
            .iter()
            .map(|s| {
                let mut c = Counts::new();
                count_statement(self.expressions, s, &mut c);
                c
            })
            .collect();
        let refs = |l: Handle<LocalVariable>, range: std::ops::Range<usize>| -> usize {
            per[range]
                .iter()
                .map(|c| c.get(&l).copied().unwrap_or(0))
                .sum()
        };
        for (k, statement) in block.iter().enumerate() {
            let Statement::Store { pointer, value } = *statement else {
                continue;
            };
            let Some(p) = self.local_of(pointer) else {
                continue;
            };
            let Expression::Load { pointer: from } = self.expressions[value] else {
                continue;
            };
            let Some(q) = self.local_of(from) else {
                continue;
            };
            if p == q || self.locals[p].ty != self.locals[q].ty || self.locals[p].init.is_some() {
                continue;
            }
            // s_j: the emit of the load, in this block.
            let Some(j) = block
                .iter()
                .take(k)
                .position(|s| matches!(s, Statement::Emit(r) if r.clone().any(|h| h == value)))
            else {
                continue;
            };
            // s_i: the first statement that references q, a whole store at this level.
            let Some(i) = (0..j).find(|&t| per[t].contains_key(&q)) else {
                continue;
            };
            if !matches!(block[i], Statement::Store { pointer, .. } if self.local_of(pointer) == Some(q))
            {
                continue;
            }
            let all_p = self.function.get(&p).copied().unwrap_or(0);
            let all_q = self.function.get(&q).copied().unwrap_or(0);
            if refs(p, k..block.len()) != all_p || refs(q, i..j + 1) != all_q {
                continue;
            }
            // Rename p to q everywhere; the copy becomes `q = q`, dropped by the caller.
            for (_, expr) in self.expressions.iter_mut() {
                if matches!(*expr, Expression::LocalVariable(l) if l == p) {
                    *expr = Expression::LocalVariable(q);
                }
            }
            self.function.insert(q, all_q + all_p - 1);
            self.function.insert(p, 0);
            self.merged += 1;
            return Some(k);
        }
        None
    }
}
