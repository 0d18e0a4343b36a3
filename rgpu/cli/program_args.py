"""The command that runs a user's program (`rgpu run`): rgpu's options before `--`, the
program's arguments after it."""

from __future__ import annotations

import click


class HintedUsageError(click.UsageError):
    """A usage error whose fix is more than "see the command's --help"."""

    def __init__(self, message: str, hint: str, ctx: click.Context | None = None) -> None:
        super().__init__(message, ctx)
        self.hint = hint


class ProgramArgsCommand(click.Command):
    """A command that runs a program: its own options before `--`, the program's arguments
    after it, untouched. An unknown option or a stray argument before `--` is an error (a
    typo such as `--backnd` must not reach the program silently); the arguments after `--`
    are the callback's `args`."""

    def collect_usage_pieces(self, ctx: click.Context) -> list[str]:
        return [*super().collect_usage_pieces(ctx), "[-- ARGS]..."]

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ours, theirs = (
            (args[: args.index("--")], args[args.index("--") + 1 :])
            if ("--" in args)
            else (args, [])
        )
        fix = (
            f"give {ctx.command_path}'s options before `--` and the program's arguments after "
            f"it: `{ctx.command_path} [OPTIONS] -- ARGS` (see `{ctx.command_path} --help`)"
        )
        try:
            rest = super().parse_args(ctx, ours)
        except click.NoSuchOption as exc:
            guess = f" (did you mean {exc.possibilities[0]}?)" if exc.possibilities else ""
            raise HintedUsageError(
                f"{ctx.command_path} has no option {exc.option_name}{guess}; program arguments "
                "go after `--`",
                fix,
                ctx,
            ) from None
        if ctx.args:
            raise HintedUsageError(
                f"unexpected argument {ctx.args[0]!r} before `--`: {ctx.command_path} takes "
                "no arguments of its own; program arguments go after `--`",
                fix,
                ctx,
            )
        ctx.params["args"] = tuple(theirs)
        return rest
