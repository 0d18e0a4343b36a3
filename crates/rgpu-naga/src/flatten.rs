//! Branch flattening for the WGSL rgpu-naga writes (WebGPU only).
//!
//! naga's SPIR-V reader turns every `OpPhi` into a function-scope `var phi_*` that each
//! predecessor block stores into, so rust-gpu's unrolled, branchy SSA arrives as hundreds of
//! `if c { phi = a; } else { phi = b; }` diamonds, and a value array built by
//! `OpCompositeInsert` chains arrives as whole-array constructions
//! `phi = array<u32, 16>(prev[0], x, prev[2], ..)`. Chromium's WebGPU on SwiftShader
//! (Tint, then SwiftShader's JIT, in the GPU process) does not finish compiling such a
//! kernel (docs/reference.md, WebGPU). This pass rewrites naga's IR, before validation, in
//! three general, semantics-preserving ways:
//!
//! 1. **select**: an `If` whose branches only evaluate side-effect-free expressions and store
//!    them into function-local variables of scalar or vector type (the same variables in both
//!    branches, each once) becomes the branches' expressions evaluated unconditionally, one
//!    `select(reject, accept, condition)` per variable and one store each; likewise
//!    `p = a; if c { p = b; }` (one branch empty, the store right before the `If`);
//! 2. **element-wise stores**: a store of a composed array or struct whose components are,
//!    all but a few, the same-index components of one value `v` of that type becomes a store
//!    of `v` followed by stores of the differing components through the variable's element
//!    pointers (no whole-value construction);
//! 3. **common store hoisting**: when both branches of an `If` begin by storing the same
//!    value (evaluated before the `If`) into the same local variable, that store moves in
//!    front of the `If`;
//! 4. **copy coalescing** (coalesce.rs): a local that is only a copy of another whose value
//!    is dead after the copy becomes that other local, so the whole-array copies of rule 2's
//!    chains go away.
//!
//! "Side-effect-free" is strict: literals, constants, arithmetic, comparisons, casts, math
//! builtins, composition and component access of values, `arrayLength`, and loads whose
//! pointer is rooted at a function-local variable the `If` does not store to, a `private`
//! variable, a `uniform`/immediate block, or a *read-only* `storage` buffer. WGSL defines
//! every one of these for any operand (integer division by zero, out-of-range shifts and
//! casts, and out-of-bounds loads return defined or bounded values, never trap), and no
//! other invocation of the dispatch can write a read-only storage buffer, so evaluating them
//! when the branch would not have run changes nothing. Never hoisted: loads of read-write
//! storage or workgroup memory, atomics, barriers, calls, subgroup operations, image access.
//! The pass is applied to WebGPU's WGSL only: MSL and HLSL leave out-of-bounds reads
//! undefined, so the speculative loads of rule 1 would not be safe there.

use std::collections::{BTreeMap, BTreeSet};

use naga::{
    AddressSpace, Arena, ArraySize, Block, Expression, Function, GlobalVariable, Handle,
    LocalVariable, Module, Range, Span, Statement, StorageAccess, Type, TypeInner, UniqueArena,
};

/// What the pass changed in one module.
#[derive(Default, Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stats {
    /// `If` statements replaced by `select`s.
    pub selects: usize,
    /// Whole-value stores rewritten element-wise.
    pub element_stores: usize,
    /// Stores common to both branches moved in front of their `If`.
    pub hoisted_stores: usize,
    /// Local variables merged into the one they were copied from (coalesce.rs).
    pub coalesced: usize,
}

/// Flattens every function and entry point of `module` (see the module docs).
pub fn flatten(module: &mut Module) -> Stats {
    let mut stats = Stats::default();
    let Module {
        types,
        global_variables,
        constants,
        functions,
        entry_points,
        ..
    } = module;
    let mut run = |function: &mut Function| {
        let body = std::mem::take(&mut function.body);
        let mut ctx = Ctx {
            types,
            globals: global_variables,
            constants,
            locals: &function.local_variables,
            expressions: &mut function.expressions,
            stats: &mut stats,
        };
        let mut body = ctx.block(body);
        stats.coalesced += crate::coalesce::coalesce(
            &function.local_variables,
            &mut function.expressions,
            &mut body,
        );
        function.body = body;
    };
    for (_, function) in functions.iter_mut() {
        run(function);
    }
    for entry in entry_points.iter_mut() {
        run(&mut entry.function);
    }
    stats
}

/// A whole-value store rewritten: the kept value and the (index, component) pairs stored
/// over it.
type ElementWise = (Handle<Expression>, Vec<(u32, Handle<Expression>)>);

/// A branch's first store: (index in the block, local, pointer, value, expressions emitted
/// before it).
type FirstStore = (
    usize,
    Handle<LocalVariable>,
    Handle<Expression>,
    Handle<Expression>,
    Vec<Handle<Expression>>,
);

struct Ctx<'a> {
    types: &'a UniqueArena<Type>,
    globals: &'a Arena<GlobalVariable>,
    constants: &'a Arena<naga::Constant>,
    locals: &'a Arena<LocalVariable>,
    expressions: &'a mut Arena<Expression>,
    stats: &'a mut Stats,
}

/// A branch made only of emits and stores to whole local variables.
struct Simple {
    emits: Vec<(Statement, Span)>,
    /// local -> (pointer expression, stored value)
    stores: BTreeMap<Handle<LocalVariable>, (Handle<Expression>, Handle<Expression>)>,
    /// Expressions the branch evaluates.
    emitted: Vec<Handle<Expression>>,
}

impl Ctx<'_> {
    fn block(&mut self, block: Block) -> Block {
        let mut out = Block::with_capacity(block.len());
        for (statement, span) in block.span_into_iter() {
            match statement {
                Statement::If {
                    condition,
                    accept,
                    reject,
                } => {
                    let accept = self.block(accept);
                    let reject = self.block(reject);
                    self.if_(condition, accept, reject, span, &mut out);
                }
                Statement::Block(inner) => out.push(Statement::Block(self.block(inner)), span),
                Statement::Switch { selector, cases } => {
                    let cases = cases
                        .into_iter()
                        .map(|mut case| {
                            case.body = self.block(std::mem::take(&mut case.body));
                            case
                        })
                        .collect();
                    out.push(Statement::Switch { selector, cases }, span);
                }
                Statement::Loop {
                    body,
                    continuing,
                    break_if,
                } => {
                    let body = self.block(body);
                    let continuing = self.block(continuing);
                    out.push(
                        Statement::Loop {
                            body,
                            continuing,
                            break_if,
                        },
                        span,
                    );
                }
                Statement::Store { pointer, value } => self.store(pointer, value, span, &mut out),
                other => out.push(other, span),
            }
        }
        out
    }

    fn emit_one(&mut self, expr: Expression, span: Span, out: &mut Block) -> Handle<Expression> {
        let handle = self.expressions.append(expr, span);
        out.push(
            Statement::Emit(Range::new_from_bounds(handle, handle)),
            span,
        );
        handle
    }

    /// `*pointer = select(rejected, accepted, condition)`.
    fn store_select(
        &mut self,
        pointer: Handle<Expression>,
        condition: Handle<Expression>,
        accept: Handle<Expression>,
        reject: Handle<Expression>,
        span: Span,
        out: &mut Block,
    ) {
        let select = self.emit_one(
            Expression::Select {
                condition,
                accept,
                reject,
            },
            span,
            out,
        );
        out.push(
            Statement::Store {
                pointer,
                value: select,
            },
            span,
        );
    }

    // --- rule 2: element-wise stores ------------------------------------------------------

    fn store(
        &mut self,
        pointer: Handle<Expression>,
        value: Handle<Expression>,
        span: Span,
        out: &mut Block,
    ) {
        if let Some((base, differing)) = self.element_wise(pointer, value) {
            self.stats.element_stores += 1;
            out.push(
                Statement::Store {
                    pointer,
                    value: base,
                },
                span,
            );
            for (index, component) in differing {
                let element = self.emit_one(
                    Expression::AccessIndex {
                        base: pointer,
                        index,
                    },
                    span,
                    out,
                );
                out.push(
                    Statement::Store {
                        pointer: element,
                        value: component,
                    },
                    span,
                );
            }
        } else {
            out.push(Statement::Store { pointer, value }, span);
        }
    }

    /// For `local = T(v[0], .., x, .., v[n-1])` (a local array or struct): `v` and the
    /// components that are not `v`'s own.
    fn element_wise(
        &self,
        pointer: Handle<Expression>,
        value: Handle<Expression>,
    ) -> Option<ElementWise> {
        let Expression::LocalVariable(local) = self.expressions[pointer] else {
            return None;
        };
        let Expression::Compose { ty, ref components } = self.expressions[value] else {
            return None;
        };
        if self.locals[local].ty != ty {
            return None;
        }
        let count = match self.types[ty].inner {
            TypeInner::Array {
                size: ArraySize::Constant(n),
                ..
            } => n.get() as usize,
            TypeInner::Struct { ref members, .. } => members.len(),
            _ => return None,
        };
        if components.len() != count {
            return None;
        }
        let mut base = None;
        for (j, &component) in components.iter().enumerate() {
            if let Expression::AccessIndex { base: b, index } = self.expressions[component] {
                if index as usize == j && self.value_type(b) == Some(ty) {
                    base = Some(b);
                    break;
                }
            }
        }
        let base = base?;
        let differing: Vec<(u32, Handle<Expression>)> = components
            .iter()
            .enumerate()
            .filter(|&(j, &c)| {
                !matches!(self.expressions[c],
                    Expression::AccessIndex { base: b, index } if b == base && index as usize == j)
            })
            .map(|(j, &c)| (j as u32, c))
            .collect();
        // Worth it only when most of the value is kept.
        (differing.len() * 2 < count).then_some((base, differing))
    }

    /// The type of a value expression, where it is plain to see.
    fn value_type(&self, expr: Handle<Expression>) -> Option<Handle<Type>> {
        match self.expressions[expr] {
            Expression::Compose { ty, .. } | Expression::ZeroValue(ty) => Some(ty),
            Expression::Constant(c) => Some(self.constants[c].ty),
            Expression::Load { pointer } => match self.expressions[pointer] {
                Expression::LocalVariable(l) => Some(self.locals[l].ty),
                Expression::GlobalVariable(g) => Some(self.globals[g].ty),
                _ => None,
            },
            _ => None,
        }
    }

    // --- rules 1 and 3: the If ------------------------------------------------------------

    fn if_(
        &mut self,
        condition: Handle<Expression>,
        mut accept: Block,
        mut reject: Block,
        span: Span,
        out: &mut Block,
    ) {
        // Rule 3 first: it may leave the branches simple enough for rule 1.
        while let Some(store) = self.common_first_store(&accept, &reject) {
            let (pointer, value, ai, ri) = store;
            accept.cull(ai..=ai);
            reject.cull(ri..=ri);
            out.push(Statement::Store { pointer, value }, span);
            self.stats.hoisted_stores += 1;
        }
        if self.one_sided(condition, &accept, &reject, span, out) {
            return;
        }
        if let (Some(a), Some(r)) = (self.simple(&accept), self.simple(&reject)) {
            let stored: BTreeSet<Handle<LocalVariable>> =
                a.stores.keys().chain(r.stores.keys()).copied().collect();
            let same = a.stores.keys().eq(r.stores.keys());
            let selectable = same
                && !a.stores.is_empty()
                && a.stores.keys().all(|&l| {
                    matches!(
                        self.types[self.locals[l].ty].inner,
                        TypeInner::Scalar(_) | TypeInner::Vector { .. }
                    )
                })
                && a.emitted
                    .iter()
                    .chain(r.emitted.iter())
                    .all(|&e| self.pure(e, &stored));
            if selectable {
                self.stats.selects += 1;
                for (statement, s) in a.emits.into_iter().chain(r.emits) {
                    out.push(statement, s);
                }
                for (local, (pointer, accepted)) in a.stores {
                    let rejected = r.stores[&local].1;
                    self.store_select(pointer, condition, accepted, rejected, span, out);
                }
                return;
            }
        }
        out.push(
            Statement::If {
                condition,
                accept,
                reject,
            },
            span,
        );
    }

    /// Rule 1's one-sided form, `p = a; if c { p = b; }` (or the store in `else`): naga
    /// writes a phi whose value comes from before the `if` that way. Becomes
    /// `p = select(a, b, c)` when the branch is simple and its expressions are
    /// side-effect-free and do not read `p`. True when rewritten (into `out`).
    fn one_sided(
        &mut self,
        condition: Handle<Expression>,
        accept: &Block,
        reject: &Block,
        span: Span,
        out: &mut Block,
    ) -> bool {
        let (branch, in_accept) = match (accept.is_empty(), reject.is_empty()) {
            (false, true) => (accept, true),
            (true, false) => (reject, false),
            _ => return false,
        };
        let Some(simple) = self.simple(branch) else {
            return false;
        };
        let Some((&local, &(pointer, taken))) = simple.stores.iter().next() else {
            return false;
        };
        if simple.stores.len() != 1
            || !matches!(
                self.types[self.locals[local].ty].inner,
                TypeInner::Scalar(_) | TypeInner::Vector { .. }
            )
        {
            return false;
        }
        let Some(&Statement::Store {
            pointer: before_pointer,
            value: before,
        }) = out.last()
        else {
            return false;
        };
        if !matches!(self.expressions[before_pointer], Expression::LocalVariable(l) if l == local) {
            return false;
        }
        let stored = BTreeSet::from([local]);
        if !simple.emitted.iter().all(|&e| self.pure(e, &stored)) {
            return false;
        }
        let last = out.len() - 1;
        out.cull(last..);
        for (statement, s) in simple.emits {
            out.push(statement, s);
        }
        let (accepted, rejected) = if in_accept {
            (taken, before)
        } else {
            (before, taken)
        };
        self.store_select(pointer, condition, accepted, rejected, span, out);
        self.stats.selects += 1;
        true
    }

    /// The branch as emits and whole-local stores, or None.
    fn simple(&self, block: &Block) -> Option<Simple> {
        let mut simple = Simple {
            emits: Vec::new(),
            stores: BTreeMap::new(),
            emitted: Vec::new(),
        };
        for (statement, span) in block.span_iter() {
            match *statement {
                Statement::Emit(ref range) => {
                    simple.emitted.extend(range.clone());
                    simple.emits.push((statement.clone(), *span));
                }
                Statement::Store { pointer, value } => {
                    let Expression::LocalVariable(local) = self.expressions[pointer] else {
                        return None;
                    };
                    if simple.stores.insert(local, (pointer, value)).is_some() {
                        return None;
                    }
                }
                _ => return None,
            }
        }
        // A value stored must not read a variable this branch stored before it: every
        // load is checked against all stored locals in `pure`.
        Some(simple)
    }

    /// Both branches' first statement after emits that do not read the variable: the same
    /// store of a value evaluated before the `If`. (pointer, value, index in accept, in
    /// reject).
    fn common_first_store(
        &self,
        accept: &Block,
        reject: &Block,
    ) -> Option<(Handle<Expression>, Handle<Expression>, usize, usize)> {
        let first = |block: &Block| -> Option<FirstStore> {
            let mut emitted = Vec::new();
            for (i, statement) in block.iter().enumerate() {
                match *statement {
                    Statement::Emit(ref range) => emitted.extend(range.clone()),
                    Statement::Store { pointer, value } => {
                        let Expression::LocalVariable(local) = self.expressions[pointer] else {
                            return None;
                        };
                        return Some((i, local, pointer, value, emitted));
                    }
                    _ => return None,
                }
            }
            None
        };
        let (ai, al, ap, av, ae) = first(accept)?;
        let (ri, rl, _, rv, re) = first(reject)?;
        if al != rl || av != rv || ae.contains(&av) || re.contains(&av) {
            return None;
        }
        // The emits the store moves in front of must not read the variable.
        let stored = BTreeSet::from([al]);
        let reads_it = |e: &Handle<Expression>| self.reads_local(*e, &stored);
        if ae.iter().any(reads_it) || re.iter().any(reads_it) {
            return None;
        }
        Some((ap, av, ai, ri))
    }

    /// The expression is a load through a pointer rooted at one of `locals`.
    fn reads_local(
        &self,
        expr: Handle<Expression>,
        locals: &BTreeSet<Handle<LocalVariable>>,
    ) -> bool {
        match self.expressions[expr] {
            Expression::Load { pointer } => {
                matches!(self.root(pointer), Root::Local(l) if locals.contains(&l))
            }
            _ => false,
        }
    }

    fn root(&self, mut pointer: Handle<Expression>) -> Root {
        loop {
            match self.expressions[pointer] {
                Expression::Access { base, .. } | Expression::AccessIndex { base, .. } => {
                    pointer = base
                }
                Expression::LocalVariable(l) => return Root::Local(l),
                Expression::GlobalVariable(g) => return Root::Global(g),
                _ => return Root::Other,
            }
        }
    }

    /// Side-effect-free and defined for any operands (module docs); loads only from memory
    /// no other invocation writes and the `If` does not store to.
    fn pure(&self, expr: Handle<Expression>, stored: &BTreeSet<Handle<LocalVariable>>) -> bool {
        match self.expressions[expr] {
            Expression::Literal(_)
            | Expression::Constant(_)
            | Expression::Override(_)
            | Expression::ZeroValue(_)
            | Expression::Compose { .. }
            | Expression::Access { .. }
            | Expression::AccessIndex { .. }
            | Expression::Splat { .. }
            | Expression::Swizzle { .. }
            | Expression::FunctionArgument(_)
            | Expression::GlobalVariable(_)
            | Expression::LocalVariable(_)
            | Expression::Unary { .. }
            | Expression::Binary { .. }
            | Expression::Select { .. }
            | Expression::Relational { .. }
            | Expression::Math { .. }
            | Expression::As { .. }
            | Expression::ArrayLength(_) => true,
            Expression::Load { pointer } => match self.root(pointer) {
                Root::Local(l) => !stored.contains(&l),
                Root::Global(g) => match self.globals[g].space {
                    AddressSpace::Private
                    | AddressSpace::Function
                    | AddressSpace::Uniform
                    | AddressSpace::Immediate => true,
                    AddressSpace::Storage { access } => !access.contains(StorageAccess::STORE),
                    _ => false,
                },
                Root::Other => false,
            },
            _ => false,
        }
    }
}

enum Root {
    Local(Handle<LocalVariable>),
    Global(Handle<GlobalVariable>),
    Other,
}
