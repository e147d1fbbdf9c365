"""The container action from inputs to exit code: run the gate, then publish, then exit.

Order matters: outputs, step summary, annotations and the PR comment are all
written before the process exits with the verdict, so a red check always comes
with its explanation. Config and harness errors are published the same way. Its log runs
no workflow command but the gate's own: everything else goes through gate/report/inert.py.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from gate.agent import separation
from gate.agent.accounting import final_check, forget
from gate.config.secrets import Redactor
from gate.errors import EXIT_ERROR, ConfigError, GateError
from gate.github import workflow
from gate.github.comment import MARKER, GitHubApi, run_url, upsert_comment
from gate.github.event import pull_request
from gate.github.inputs import read_inputs
from gate.report import markdown, write_all
from gate.report.escape import text
from gate.report.inert import inert_stdio, inert_stream
from gate.report.injected import no_fault_note


def run_action(env=os.environ, out=None) -> int:
    # Every line of the step's log but the gate's own commands is inert (gate/report/inert.py): the agent's
    # text cannot add a mask, forge an annotation or stop the gate's commands.
    with inert_stdio():
        return _run_action(env, inert_stream(out or sys.stdout))


def _run_action(env, out) -> int:
    forget()  # this run's processes only (gate/agent/accounting.py)
    workflow.protect(env)  # before any agent starts: it runs as another user, who must not write them
    try:
        inputs = read_inputs(env)
    except GateError as exc:
        return _fail_early(str(exc), env, out, exc)
    if inputs.github_token:
        workflow.mask(inputs.github_token, out)
    workspace = Path(env.get("GITHUB_WORKSPACE", os.getcwd()))
    workdir = (workspace / inputs.working_directory).resolve()
    try:
        report, loaded, paths = _run(inputs, workdir, workspace, out)
    except GateError as exc:
        return _fail_early(str(exc), env, out, exc)
    except Exception as exc:  # a gate bug outside the run itself: still a summary and an annotation
        return _fail_early(f"the gate itself failed: {exc!r}", env, out)
    final_check(report)  # GitHub's files come last, after a final check that nothing of the agent is alive
    config_file = workflow.relative(loaded.path, workspace)
    _annotate(report, config_file, out)
    _annotate_error(report, config_file, out)
    final = _place(paths, inputs, workdir, out)
    v = report.verdict
    # workspace-relative: the container sees /github/workspace, later steps the runner's own path
    workflow.set_outputs({"score": "" if v.score is None else f"{v.score:.2f}", "verdict": v.verdict,
                          "report": workflow.relative(final["json"], workspace),
                          "junit": workflow.relative(final["junit"], workspace)}, env)
    summary = markdown.render(report, limit=markdown.SUMMARY_LIMIT - 2048)
    try:
        notice = _comment(report, inputs, env, out)
    except Exception as exc:  # a gate bug posting the comment must not cost the summary or the exit code
        notice = f"could not post the PR comment: {exc!r}"
        workflow.warning(notice, title="chaos-gate: no PR comment", out=out)
    if notice:
        summary += f"\n> **Note:** {text(notice, 600)}\n"
    workflow.append_summary(loaded.redactor.redact(summary), env)
    return v.exit_code


def _run(inputs, workdir: Path, workspace: Path, out):
    from gate.agent.reaper import install_signal_handlers
    from gate.plan import load_config
    from gate.report.failure import redacted
    from gate.runner import run_gate
    from gate.runner.guard import run_guarded

    from gate.plan.shard import parse_shard

    config_path = workdir / inputs.config
    # the config as the repository names it, like the ::error annotations: every reproduce command, the
    # JUnit `file` and the report's `config` then work from the repository root, whatever working-directory is
    label = workflow.relative(config_path, workspace)
    loaded = load_config(config_path, {"seed": inputs.seed, "runs": inputs.runs, "agent.time_scale": inputs.time_scale})
    if not inputs.allow_unboxed:
        refuse_unboxed(loaded)
    loaded.redactor.add(inputs.github_token or "", "github-token")
    for value in loaded.redactor.values:
        workflow.mask(value, out)
    if inputs.min_score is not None:
        loaded.config.gate.min_score = inputs.min_score
    if inputs.fail_on:
        loaded.config.gate.fail_on = inputs.fail_on
    output = loaded.config.output  # the Action is GitHub Actions: `auto` means annotated, whatever the env says
    output.junit_family = inputs.junit_family or ("annotated" if output.junit_family == "auto" else output.junit_family)
    out_dir = loaded.base_dir / loaded.config.output.dir  # where the CLI writes for the same config
    baseline = _baseline(inputs, workdir, out)
    install_signal_handlers()
    workflow.group("chaos-gate merge" if inputs.merge else "chaos-gate run", out)
    try:
        separation.require_box(not inputs.allow_unboxed)  # no silent fallback to the gate's own user either
        if inputs.merge:
            from gate.verdict.merge import merge_reports

            found = sorted(p for p in workdir.glob(inputs.reports) if loaded.config.output.dir not in p.parts)
            out.write(f"merging {len(found)} shard report(s): {', '.join(map(str, found))}\n")
            report = merge_reports(loaded, found, baseline)
        else:
            shard = parse_shard(inputs.shard) if inputs.shard else None
            report = run_guarded(loaded, out_dir, label,  # a report on every exit path
                                 lambda: run_gate(loaded, config_label=label, output_dir=out_dir, shard=shard,
                                                  baseline=baseline, **_progress(out)))
    finally:
        separation.require_box(False)  # the policy is this run's: a later run in this process sets its own
        workflow.endgroup(out)
    report = redacted(report, loaded.redactor)  # annotations and the comment render from it
    final_check(report)  # nothing the agent started is alive while the reports are written
    paths = write_all(report, out_dir, loaded.config.output, loaded.redactor.redact)
    v = report.verdict
    unattacked = no_fault_note(report)
    out.write(f"chaos-gate: {v.verdict.upper()} score {'n/a' if v.score is None else f'{v.score:.1f}'}"
              f"{f' · {unattacked}' if unattacked else ''}\n")
    return report, loaded, paths


def refuse_unboxed(loaded) -> None:
    """The config is the pull request's: a hostile PR could set `user: off` and run its agent as the gate's
    own user, next to GitHub's token and files. The Action refuses that unless its workflow says so."""
    config = loaded.config
    keys = ([("agent", "user")] if config.agent.user == "off" else []) + \
        [("services", i, "user") for i, service in enumerate(config.services) if service.user == "off"]
    if not keys:
        return
    problems = [f"{loaded.path}:{loaded.line_of(*key)}: {'.'.join(map(str, key))}: off runs it as the gate's own "
                "user, outside its box, and the Action refuses that for a config a pull request can change — drop "
                "the key (the agent then runs as a user of its own), or set the Action input `allow-unboxed: "
                "true` for trusted code" for key in keys]
    raise ConfigError(problems[0], problems)


def _progress(out) -> dict:
    """Plain progress lines in the run's log group (a live bar would flood the log)."""
    from gate.report.progress import PlainProgress

    plain = PlainProgress(out)
    return {"on_plan": plain.on_plan, "on_progress": plain.on_progress}


def _baseline(inputs, workdir: Path, out):
    """main's report (baseline-report): missing on the first run of a new repository, which is a
    notice, not an error; a file that is there but unreadable is an error."""
    from gate.runner.insights import read_baseline

    if not inputs.baseline_report:
        return None
    path = workdir / inputs.baseline_report
    if not path.exists():
        workflow.notice(f"baseline-report {inputs.baseline_report} not found: no comparison with main", out=out)
        return None
    return read_baseline(path)


def _annotate(report, config_file: str, out) -> None:
    """One ::error per breached critical invariant, on its line in the config."""
    lines = {i.id: i.line for i in report.verdict.invariants}
    for inv in report.verdict.invariants:
        if inv.severity != "critical" or inv.breached == 0:
            continue
        cell = next(c for c in report.verdict.cells for b in c.breaches if b.id == inv.id)
        message = next(b.message for b in cell.breaches if b.id == inv.id)
        workflow.error(f"{inv.breached} cell(s) breach '{inv.id}', e.g. {cell.id}: {message}. "
                       f"Reproduce: {cell.reproduce}", file=config_file, line=lines.get(inv.id) or 1,
                       title=f"critical invariant {inv.id} breached", out=out)


def _annotate_error(report, config_file: str, out) -> None:
    """An `error` verdict (agent did not start, harness error, interrupted) gets its own ::error."""
    v = report.verdict
    if v.verdict != "error" or not v.error_reason:
        return
    workflow.error(f"{v.error_reason}: {v.reasons[0] if v.reasons else ''} (details in the step summary)",
                   file=config_file, line=1, title=f"chaos-gate could not judge ({v.error_reason})", out=out)


def _place(paths: dict, inputs, workdir: Path, out) -> dict:
    """Copy report.json / the JUnit file where report-path / junit-path ask. The gate's own file is
    already there (the README's "Against main" step names it): nothing to copy. A copy that fails
    is a warning; the outputs then name the gate's own file, which exists."""
    final = dict(paths)
    for key, name, wanted in (("json", "report-path", inputs.report_path), ("junit", "junit-path", inputs.junit_path)):
        if not wanted:
            continue
        target = workdir / wanted
        try:
            if not (target.exists() and target.samefile(paths[key])):
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(paths[key], target)
        except OSError as exc:
            workflow.warning(f"{name} {wanted}: could not copy {paths[key].name} there ({exc.strerror or exc}); "
                             f"the `{'report' if key == 'json' else 'junit'}` output names the gate's own file",
                             title=f"chaos-gate: {name}", out=out)
            continue
        final[key] = target
    return final


def _comment(report, inputs, env, out) -> str | None:
    """Post or update the sticky comment; returns a notice for the summary when it could not."""
    if not inputs.comment:
        return None
    if inputs.shard:
        return None  # only the merge step comments; a shard writes its step summary only
    pr = pull_request(env)
    if pr is None:
        workflow.notice("not a pull request: no PR comment; the report is in the step summary", out=out)
        return None
    if not inputs.github_token:
        msg = "no github-token: no PR comment; the report is in the step summary"
        workflow.notice(msg, out=out)
        return msg
    api = GitHubApi(env.get("GITHUB_API_URL", "https://api.github.com"), inputs.github_token)
    try:
        body = markdown.render(report, limit=markdown.COMMENT_LIMIT - len(MARKER) - 1, marker=MARKER,
                               full_report=run_url(env))
        result = upsert_comment(api, pr.repo, pr.number, body, inputs.comment_mode, inputs.comment_author,
                                from_fork=pr.from_fork)
    finally:
        api.close()
    if result.posted:
        out.write(f"chaos-gate: PR comment {result.action}: {result.url}\n")
        return None
    annotate = workflow.warning if result.level == "warning" else workflow.notice
    annotate(result.notice, title="chaos-gate: no PR comment", out=out)
    return result.notice


def _fail_early(message: str, env, out, exc: GateError | None = None) -> int:
    final_check()  # a run that failed may have left the agent's processes behind
    redact = Redactor.for_environment(env).redact  # a message may quote a value from the environment
    message = redact(message)
    problems = [redact(p) for p in exc.problems] if isinstance(exc, ConfigError) else []
    workspace = Path(env.get("GITHUB_WORKSPACE", os.getcwd()))
    if not workflow.config_errors(problems, workspace, out):
        workflow.error(message.splitlines()[0], title="chaos-gate could not run", out=out)
    out.write(message + "\n")
    workflow.set_outputs({"score": "", "verdict": "error", "report": "", "junit": ""}, env)
    workflow.append_summary(markdown.error_summary(message), env)
    return EXIT_ERROR
