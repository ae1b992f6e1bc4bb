"""``sieve-lite model list | get | check``: the models at hand, getting one, checking one."""

from __future__ import annotations

import click

from ..output import versioned
from ._common import EXIT_FOUND, EXIT_NOTHING, finish, print_json
from ._progress import download_progress, human_bytes


@click.group()
def model() -> None:
    """The models ask can run: list them, get one, check one.

    \b
    The model folder is 'models' in the user's data folder (XDG_DATA_HOME moves it on
    Linux); 'ask --model NAME' runs a model from it by name."""


@model.command("list")
@click.option("--json", "as_json", is_flag=True, help="One JSON object.")
def list_(as_json: bool) -> None:
    """The shipped model, the models in the model folder, and $SIEVE_LITE_MODEL; '*' marks
    the one ask runs without --model."""
    from ..agent.models import list_models, models_dir

    entries = list_models()
    folder = str(models_dir())

    def render() -> None:
        if as_json:
            print_json(versioned("models", {"folder": folder,
                                            "models": [e.to_dict() for e in entries]}))
            return
        from ..display import clean

        for e in entries:
            size = human_bytes(e.bytes) if e.bytes is not None else "missing"
            mark = "*" if e.default else " "
            click.echo(clean(f"{mark} {e.name:40} {size:>9}  {e.where:18} {e.path}"))
        click.echo(clean(f"model folder: {folder}"), err=True)

    finish(render, EXIT_FOUND)


@model.command()
@click.argument("source")
@click.option("--sha256", required=True, metavar="HEX",
              help="The file's SHA-256: the file is kept only when it has it.")
@click.option("--force", is_flag=True,
              help="Replace a model of that file name with another checksum.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object.")
@click.option("--quiet", "-q", is_flag=True, help="No progress.")
def get(source: str, sha256: str, force: bool, as_json: bool, quiet: bool) -> None:
    """Download the GGUF at SOURCE into the model folder: an http(s) URL, a path, or
    hf:OWNER/REPO/FILE.gguf (that file on Hugging Face). Progress shows bytes per second and
    the time left; a cut-off download resumes where it stopped when run again; the file is
    kept only once its checksum is HEX and it is a GGUF file, and is renamed into place
    whole."""
    from ..agent.models import get_model

    with download_progress("model get", quiet=quiet or as_json, lines=True) as progress:
        report = get_model(source, sha256, force=force, progress=progress)

    def render() -> None:
        if as_json:
            print_json(versioned("model-get", report.to_dict()))
        elif not quiet:
            from ..display import clean

            how = "already there, with that sha256" if report.already else (
                f"{report.bytes:,} bytes, sha256 checked"
                + (f", resumed from {report.resumed_from:,}" if report.resumed_from else ""))
            click.echo(clean(f"saved {report.path}: {how}; run it with "
                             f"'sieve-lite ask --model {report.name} QUESTION'"), err=True)

    finish(render, EXIT_FOUND)


@model.command()
@click.argument("target", metavar="PATH|NAME|URL")
@click.option("--n-ctx", type=click.IntRange(512, 1_048_576), default=8192, show_default=True,
              help="Context window asked for (capped at what the model or server allows).")
@click.option("--no-speed", is_flag=True, help="Skip the two timing requests.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object.")
def check(target: str, n_ctx: int, no_speed: bool, as_json: bool) -> None:
    """Check a model before a long run: a GGUF (a path, or a name in the model folder) run in
    process, or the model behind a server URL. Shows its chat template, context, the
    constraint it gets and whether it honours it (the check ask makes before a run), prompt
    and generation tokens per second, and the profile ask gives it. Exit 0 when the
    constraint is honoured, 1 when it is not (ask would refuse to run on it)."""
    from ..agent.check import check_model

    report = check_model(target, n_ctx=n_ctx, speed=not no_speed)

    def render() -> None:
        if as_json:
            print_json(versioned("model-check", report.to_dict()))
            return
        from ..display import clean

        def rate(x: float | None) -> str:
            return f"{x:,.1f} tokens/s" if x else "not measured"

        params = ("not reported" if not report.params else
                  f"{report.params / 1e6:.0f}M" if report.params < 1e9 else
                  f"{report.params / 1e9:.3g}B")
        capable = {None: "", True: " (passed the capability probe)",
                   False: " (failed the capability probe)"}[report.capable]
        rows = [("runs", report.runs), ("model", report.model),
                ("parameters", params + capable),
                ("context", f"{report.context:,} tokens" if report.context else "unknown"),
                ("trained context", f"{report.trained_context:,} tokens"
                 if report.trained_context else "not reported"),
                ("chat template", report.chat_template),
                ("constraint", f"{report.constraint}: "
                 + ("honoured" if report.honoured else "IGNORED (ask refuses to run; "
                                                       "--allow-unconstrained runs anyway)")),
                ("prompt", rate(report.prompt_tokens_per_second)),
                ("generation", rate(report.generation_tokens_per_second)),
                ("profile", report.profile + "; " + ", ".join(
                    f"{k} {v}" for k, v in report.budgets.items()))]
        for key, value in rows:
            click.echo(clean(f"{key:16} {value}"))

    finish(render, EXIT_FOUND if report.honoured else EXIT_NOTHING)
