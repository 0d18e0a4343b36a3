//! What a `#[rgpu::kernel]` function is, read from its signature: one description that
//! every expansion (the CUDA, rust-gpu and CPU entry points and the host launcher) uses.

use syn::spanned::Spanned;
use syn::{
    Attribute, Error, Expr, FnArg, GenericArgument, Ident, ItemFn, Lit, LitInt, Pat, PathArguments,
    Result, ReturnType, Type, TypePath, TypeReference,
};

/// Threads per workgroup when the attribute does not say.
pub const DEFAULT_THREADS: u32 = 256;

/// How a kernel's invocations are laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// One invocation per index `0..n` (`Item` context or `#[item]` parameters).
    Items,
    /// Every invocation of every workgroup (`Group` context): barriers and workgroup memory.
    Groups,
}

#[derive(Clone)]
pub enum Kind {
    /// The `Item` or `Group` context (not passed by the launcher).
    Context,
    /// `#[item] x: &T`: element `i` of a read-only buffer.
    ItemIn(Type),
    /// `#[item] y: &mut T`: element `i` of a read-write buffer.
    ItemOut(Type),
    /// `x: &[T]`: a read-only buffer, whole.
    Slice(Type),
    /// `y: Global<T>`: a read-write buffer, whole.
    Global(Type),
    /// `s: Shared<T, N>`: workgroup memory.
    Shared(Type, Expr),
    /// Anything else: a value passed by copy (push constant / by-value argument).
    Scalar,
}

#[derive(Clone)]
pub struct Param {
    pub name: Ident,
    pub ty: Type,
    pub kind: Kind,
}

impl Param {
    pub fn is_buffer(&self) -> bool {
        matches!(
            self.kind,
            Kind::ItemIn(_) | Kind::ItemOut(_) | Kind::Slice(_) | Kind::Global(_)
        )
    }

    pub fn writes(&self) -> bool {
        matches!(self.kind, Kind::ItemOut(_) | Kind::Global(_))
    }

    /// The element type of a buffer parameter.
    pub fn elem(&self) -> Option<&Type> {
        match &self.kind {
            Kind::ItemIn(t) | Kind::ItemOut(t) | Kind::Slice(t) | Kind::Global(t) => Some(t),
            _ => None,
        }
    }
}

pub struct Kernel {
    pub item: ItemFn,
    pub name: Ident,
    pub threads: u32,
    /// CUDA's register budget per invocation (`registers = R`), if given.
    pub registers: Option<u32>,
    pub mode: Mode,
    /// The launch's dimensions (1, 2 or 3): `Item<D>` / `Group<D>`, 1 without a context.
    pub dims: usize,
    pub params: Vec<Param>,
    /// The user's attributes other than the kernel's own (docs, allow, ...).
    pub attrs: Vec<Attribute>,
}

impl Kernel {
    pub fn buffers(&self) -> impl Iterator<Item = &Param> {
        self.params.iter().filter(|p| p.is_buffer())
    }

    pub fn scalars(&self) -> impl Iterator<Item = &Param> {
        self.params
            .iter()
            .filter(|p| matches!(p.kind, Kind::Scalar))
    }

    pub fn shared(&self) -> impl Iterator<Item = (&Param, &Type, &Expr)> {
        self.params.iter().filter_map(|p| match &p.kind {
            Kind::Shared(t, n) => Some((p, t, n)),
            _ => None,
        })
    }

    pub fn ident(&self, what: &str) -> Ident {
        Ident::new(&format!("__rgpu_{what}_{}", self.name), self.name.span())
    }
}

/// The kernel's arguments: `threads = 256` and, optionally, `registers = 64`.
pub struct Args {
    pub threads: u32,
    /// The register budget per invocation on CUDA (PTX `.maxnreg`), if given.
    pub registers: Option<u32>,
}

const ARGS_HELP: &str = "rgpu::kernel takes `threads = N` and optionally `registers = R` \
     (e.g. #[rgpu::kernel(threads = 256, registers = 64)])";

fn int_arg(meta: &syn::MetaNameValue, what: &str) -> Result<(u32, proc_macro2::Span)> {
    let Expr::Lit(syn::ExprLit {
        lit: Lit::Int(value),
        ..
    }) = &meta.value
    else {
        return Err(Error::new(
            meta.value.span(),
            format!(
                "`{what}` must be an integer literal: rust-gpu's `threads(...)` takes a literal"
            ),
        ));
    };
    Ok((LitInt::base10_parse(value)?, value.span()))
}

/// `threads = 256` and `registers = 64`, in any order, each at most once.
pub fn parse_args(attr: proc_macro2::TokenStream) -> Result<Args> {
    let mut args = Args {
        threads: DEFAULT_THREADS,
        registers: None,
    };
    if attr.is_empty() {
        return Ok(args);
    }
    let parser =
        syn::punctuated::Punctuated::<syn::MetaNameValue, syn::Token![,]>::parse_terminated;
    let metas = syn::parse::Parser::parse2(parser, attr.clone())
        .map_err(|_| Error::new(attr.span(), ARGS_HELP))?;
    let (mut threads_seen, mut registers_seen) = (false, false);
    for meta in &metas {
        if meta.path.is_ident("threads") && !threads_seen {
            threads_seen = true;
            let (threads, span) = int_arg(meta, "threads")?;
            if threads == 0 || threads > 1024 {
                return Err(Error::new(
                    span,
                    "`threads` must be 1..=1024 (CUDA's limit per block; Vulkan guarantees 128)",
                ));
            }
            args.threads = threads;
        } else if meta.path.is_ident("registers") && !registers_seen {
            registers_seen = true;
            let (registers, span) = int_arg(meta, "registers")?;
            if !(16..=255).contains(&registers) {
                return Err(Error::new(
                    span,
                    "`registers` must be 16..=255 (PTX `.maxnreg`: registers per invocation on CUDA)",
                ));
            }
            args.registers = Some(registers);
        } else {
            return Err(Error::new(
                meta.path.span(),
                format!("unknown or repeated argument: {ARGS_HELP}"),
            ));
        }
    }
    Ok(args)
}

fn last_segment(ty: &Type) -> Option<(&Ident, &PathArguments)> {
    match ty {
        Type::Path(TypePath { qself: None, path }) => {
            path.segments.last().map(|s| (&s.ident, &s.arguments))
        }
        _ => None,
    }
}

fn generic_args(args: &PathArguments) -> Vec<&GenericArgument> {
    match args {
        PathArguments::AngleBracketed(a) => a.args.iter().collect(),
        _ => Vec::new(),
    }
}

fn classify(ty: &Type, item: bool) -> Result<Kind> {
    if item {
        return match ty {
            Type::Reference(TypeReference {
                mutability, elem, ..
            }) if !matches!(**elem, Type::Slice(_)) => Ok(if mutability.is_some() {
                Kind::ItemOut((**elem).clone())
            } else {
                Kind::ItemIn((**elem).clone())
            }),
            _ => Err(Error::new(
                ty.span(),
                "an #[item] parameter is `&T` (read element i) or `&mut T` (write element i)",
            )),
        };
    }
    if let Type::Reference(TypeReference {
        mutability, elem, ..
    }) = ty
    {
        if let Type::Slice(slice) = &**elem {
            if mutability.is_some() {
                return Err(Error::new(
                    ty.span(),
                    "a read-write buffer is `rgpu::Global<T>` (every invocation sees it whole), \
                     or `#[item] y: &mut T` (invocation i writes element i); `&mut [T]` would \
                     alias across invocations",
                ));
            }
            return Ok(Kind::Slice((*slice.elem).clone()));
        }
        return Err(Error::new(
            ty.span(),
            "kernel parameters are values, `&[T]`, `rgpu::Global<T>`, `rgpu::Shared<T, N>`, \
             or #[item] `&T` / `&mut T`",
        ));
    }
    match last_segment(ty) {
        Some((name, _)) if name == "Item" || name == "Group" => Ok(Kind::Context),
        Some((name, args)) if name == "Global" => match generic_args(args).as_slice() {
            [GenericArgument::Type(t)] => Ok(Kind::Global(t.clone())),
            _ => Err(Error::new(ty.span(), "write `rgpu::Global<T>`")),
        },
        Some((name, args)) if name == "Shared" => match generic_args(args).as_slice() {
            [GenericArgument::Type(t), GenericArgument::Const(n)] => {
                Ok(Kind::Shared(t.clone(), n.clone()))
            }
            [GenericArgument::Type(t), GenericArgument::Type(Type::Path(n))] => {
                // `Shared<u32, TILE>`: a const name parses as a type path.
                Ok(Kind::Shared(
                    t.clone(),
                    Expr::Path(syn::ExprPath {
                        attrs: Vec::new(),
                        qself: None,
                        path: n.path.clone(),
                    }),
                ))
            }
            _ => Err(Error::new(
                ty.span(),
                "write `rgpu::Shared<T, N>` (N elements of u32, i32 or f32)",
            )),
        },
        _ => Ok(Kind::Scalar),
    }
}

fn context_mode(ty: &Type) -> Mode {
    match last_segment(ty) {
        Some((name, _)) if name == "Group" => Mode::Groups,
        _ => Mode::Items,
    }
}

/// The `D` of `Item<D>` / `Group<D>`: 1 without arguments, else an integer literal 1..=3.
fn context_dims(ty: &Type) -> Result<usize> {
    let Some((name, args)) = last_segment(ty) else {
        return Ok(1);
    };
    let wrong = || {
        Error::new(
            ty.span(),
            format!(
                "write `{name}` (1-D), `{name}<2>` or `{name}<3>`: the launch's dimensions are \
                 an integer literal 1, 2 or 3"
            ),
        )
    };
    match generic_args(args).as_slice() {
        [] => Ok(1),
        [GenericArgument::Const(Expr::Lit(syn::ExprLit {
            lit: Lit::Int(value),
            ..
        }))] => match value.base10_parse::<usize>() {
            Ok(d @ 1..=3) => Ok(d),
            _ => Err(wrong()),
        },
        _ => Err(wrong()),
    }
}

pub fn parse(attr: proc_macro2::TokenStream, mut item: ItemFn) -> Result<Kernel> {
    let Args { threads, registers } = parse_args(attr)?;
    let sig = &item.sig;
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        return Err(Error::new(
            sig.generics.span(),
            "a kernel cannot be generic: each codegen compiles one entry point per function",
        ));
    }
    if let Some(unsafety) = &sig.unsafety {
        return Err(Error::new(
            unsafety.span(),
            "write the kernel as a safe `fn`; put `unsafe` blocks inside it",
        ));
    }
    if sig.asyncness.is_some() || sig.abi.is_some() || sig.variadic.is_some() {
        return Err(Error::new(sig.span(), "a kernel is a plain `fn`"));
    }
    if !matches!(sig.output, ReturnType::Default) {
        return Err(Error::new(sig.output.span(), "a kernel returns nothing"));
    }
    let mut params = Vec::new();
    let mut mode: Option<Mode> = None;
    let mut dims = 1;
    let mut saw_item = false;
    for (index, input) in item.sig.inputs.iter_mut().enumerate() {
        let FnArg::Typed(pat) = input else {
            return Err(Error::new(input.span(), "a kernel is not a method"));
        };
        let Pat::Ident(binding) = &*pat.pat else {
            return Err(Error::new(
                pat.pat.span(),
                "name each kernel parameter (no patterns)",
            ));
        };
        let is_item = take_item_attr(&mut pat.attrs)?;
        if let Some(attr) = pat.attrs.first() {
            return Err(Error::new(
                attr.span(),
                "kernel parameters take no attributes other than #[item]",
            ));
        }
        let kind = classify(&pat.ty, is_item)?;
        if let Kind::Context = kind {
            if index != 0 || mode.is_some() {
                return Err(Error::new(
                    pat.ty.span(),
                    "the `Item` or `Group` context is the kernel's first parameter, once",
                ));
            }
            mode = Some(context_mode(&pat.ty));
            dims = context_dims(&pat.ty)?;
        }
        saw_item |= is_item;
        params.push(Param {
            name: binding.ident.clone(),
            ty: (*pat.ty).clone(),
            kind,
        });
    }
    let has_shared = params.iter().any(|p| matches!(p.kind, Kind::Shared(..)));
    let mode =
        match (mode, has_shared, saw_item) {
            (Some(Mode::Items), true, _) | (None, true, _) => return Err(Error::new(
                item.sig.ident.span(),
                "workgroup memory (`Shared`) needs the `Group` context as the first parameter: \
                 `g: rgpu::Group` (its invocations meet at `g.barrier()`)",
            )),
            (Some(Mode::Groups), _, true) => {
                return Err(Error::new(
                    item.sig.ident.span(),
                    "#[item] parameters belong to item kernels (one invocation per index); a \
                 `Group` kernel indexes `&[T]` / `rgpu::Global<T>` itself",
                ))
            }
            (Some(m), _, _) => m,
            (None, false, _) => Mode::Items,
        };
    let attrs = item.attrs.clone();
    Ok(Kernel {
        name: item.sig.ident.clone(),
        item,
        threads,
        registers,
        mode,
        dims,
        params,
        attrs,
    })
}

/// Removes `#[item]` (also spelled `#[rgpu::item]`) from a parameter; whether it was there.
fn take_item_attr(attrs: &mut Vec<Attribute>) -> Result<bool> {
    let before = attrs.len();
    attrs.retain(|a| {
        let path = a.path();
        !(path.is_ident("item")
            || (path.segments.len() == 2
                && path.segments[0].ident == "rgpu"
                && path.segments[1].ident == "item"))
    });
    Ok(attrs.len() != before)
}
