"""``guiforge stats --realism``: what the data is filled with — world density and the
coherence rules worlds broke, instruction templates per skill, themes, viewports and
distractors per domain, and the teacher's thoughts and recoveries."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from guiforge.export.figures import export_realism
from guiforge.skills.realism import realism_of_tasks
from guiforge.skills.realism_images import image_looks_of_tasks
from guiforge.teacher.realism import teacher_realism


def print_realism(out: Console, lake_uri: str, run_id: str | None) -> None:
    # heavy: numpy, imported when this runs
    from guiforge.lake.store import Lake

    # heavy: faker, jinja2, imported when this runs
    from guiforge.worlds.realism import realism_rows

    lake = Lake(lake_uri)
    worlds = realism_rows(lake_uri, run_id)
    if worlds["density"]:
        t = Table(title="world density (per world)")
        for col in ("metric", "worlds", "mean", "min", "max", "target"):
            t.add_column(col, justify="left" if col == "metric" else "right")
        for r in worlds["density"]:
            target = "" if r["target"] is None else f"{r['target']} {'✓' if r['meets_target'] else '✗'}"
            t.add_row(r["metric"], str(r["worlds"]), str(r["mean"]), str(r["min"]), str(r["max"]), target)
        out.print(t)
    if worlds["rule_failures"]:
        t = Table(title="coherence rules that excluded worlds")
        for col in ("rule", "worlds", "example"):
            t.add_column(col)
        for r in worlds["rule_failures"]:
            t.add_row(r["rule"], str(r["worlds"]), r["example"][:90])
        out.print(t)
    _print_documents(out, worlds.get("documents") or {})
    print_life(out, worlds)
    tasks = realism_of_tasks(lake)
    if tasks:
        s = tasks["templates"]["summary"]
        out.print(f"instructions: {s['tasks']} tasks, {s['templates']} distinct templates ({s['ratio']}); "
                  f"{s['skills_at_0_8']} of {s['skills_judged']} skills with several tasks at >= 0.8 "
                  "templates per task", highlight=False)
        print_voice(out, tasks.get("cards") or {}, tasks.get("voice") or {})
        t = Table(title="presentation per domain")
        for col in ("domain", "tasks", "themes", "viewports", "distractors", "screens"):
            t.add_column(col)
        for domain, u in tasks["presentation"].items():
            t.add_row(domain, str(u["tasks"]), *(", ".join(f"{k} {v}" for k, v in (u.get(key) or {}).items())
                                                 for key in ("themes", "viewports", "distractors", "screens")))
        out.print(t)
    print_image_looks(out, lake)
    teacher = teacher_realism(lake, run_id)
    if teacher.get("thoughts"):
        th, rec = teacher["thoughts"], teacher["recovery"]
        out.print(f"teacher thoughts: {th['thoughts']}, mean {th['mean_words']} words (median "
                  f"{th['median_words']}), {th['distinct_share']:.0%} distinct, {th['with_reason_share']:.0%} "
                  "give a reason", highlight=False)
        share = "-" if rec["recovery_share"] is None else f"{rec['recovery_share']:.0%}"
        out.print(f"teacher mistakes: {rec['with_mistake']} of {rec['trajectories']} trajectories hold one, "
                  f"{rec['with_correction']} of those also its correction ({share}); by kind: "
                  f"{rec['mistakes_by_kind']}", highlight=False)
        if rec.get("by_domain"):
            out.print("corrected per domain (goal >= 30% in each GUI domain): " + ", ".join(
                f"{d} {'-' if f['recovery_share'] is None else format(f['recovery_share'], '.0%')} of "
                f"{f['with_mistake']}" for d, f in rec["by_domain"].items()), highlight=False)
    print_export_breadth(out, lake, run_id)


def _print_documents(out: Console, docs: dict) -> None:
    if not docs.get("worlds"):
        return
    out.print(f"documents: {docs['text_documents']} text documents ({docs['structured_text_documents']} with "
              f"sections), {docs['sections_per_text_document']} "
              f"sections, {docs['tables_per_text_document']} tables and {docs['lines_per_text_document']} "
              f"lines each; {docs['decks']} decks, {docs['slides_per_deck']} slides each, "
              f"{docs['charts']} charts, {docs['pictures']} pictures", highlight=False)
    out.print("slide layouts: " + ", ".join(f"{k} {v}" for k, v in docs["layouts_used"].items()),
              highlight=False)


def print_voice(out: Console, cards: dict, voice: dict) -> None:
    """Instruction templates per card (English and per language), and how tasks are said."""
    if cards.get("cards"):
        below = cards["below_min"]
        out.print(f"instruction templates: {cards['phrasings']} over {cards['cards']} cards, "
                  f"{cards['mean_en']} English per card on average (fewest {cards['min_en']}; "
                  f"{len(below)} below 8{': ' + ', '.join(below[:5]) if below else ''}); in other languages: "
                  + (", ".join(f"{k} {v} cards" for k, v in cards["localized_cards"].items()) or "none")
                  + f"; {cards['with_context']} cards with reasons of their own", highlight=False)
    if voice.get("tasks"):
        reasons = ", ".join(f"{k} {v}" for k, v in voice["reasons"].items()) or "none"
        out.print(f"voice: {voice['mean_phrasings_used']} phrasings used per skill; languages "
                  + ", ".join(f"{k} {v}" for k, v in voice["languages"].items())
                  + "; registers " + ", ".join(f"{k} {v}" for k, v in list(voice["registers"].items())[:8])
                  + f"; {voice['with_reason']} tasks give a reason (whose: {reasons})", highlight=False)


def print_life(out: Console, worlds: dict) -> None:
    """Mail that reads as templates, people who do not fit what they write, pay by occupation."""
    mail, rel, pay = worlds.get("mail") or {}, worlds.get("relationships") or {}, worlds.get("pay") or {}
    if mail:
        out.print(f"mail: {mail['emails']} e-mails in {mail['worlds']} worlds, {mail['templates']} body templates; "
                  f"the most shared is in {mail['max_world_share']:.1%} of worlds, {mail['templates_over_5pct']} "
                  f"in more than 5% ({mail['emails_in_shared_templates']:.1%} of e-mails)", highlight=False)
    if rel:
        out.print(f"relationships: {rel['violations']} messages or entries from someone who does not fit them"
                  + (f" (e.g. {rel['examples'][0]})" if rel["examples"] else ""), highlight=False)
    if pay.get("worlds"):
        out.print(f"pay: {pay['pairs']} pairs of occupations in one country set apart by the wage table, "
                  f"{pay['inversions']} paid the other way round" + (f" (e.g. {pay['example']})" if pay["example"] else ""),
                  highlight=False)


def print_image_looks(out: Console, lake) -> None:
    """Document images by look (clean render, scan, phone photo), per skill."""
    looks = image_looks_of_tasks(lake)
    if not looks.get("images"):
        return
    t = Table(title=f"document images by look ({looks['images']} in {looks['tasks_with_images']} tasks)")
    for col in ("skill", "clean", "scan", "photo"):
        t.add_column(col, justify="left" if col == "skill" else "right")
    for skill, counts in [*looks["per_skill"].items(), ("all", looks["by_look"])]:
        t.add_row(skill, *(str(counts.get(k, 0)) for k in ("clean", "scan", "photo")))
    out.print(t)


def print_export_breadth(out: Console, lake, run_id: str | None) -> None:
    """Rollout tiers and what the latest SFT export holds: tasks, duplicates, screenshots, splits."""
    figures = export_realism(lake, run_id)
    if figures.get("tiers"):
        out.print("rollouts by tier: " + ", ".join(f"{k} {v['tasks']} tasks / {v['samples']} samples"
                                                   for k, v in figures["tiers"].items()), highlight=False)
    e = figures.get("export")
    if not e or e.get("sft_rows") is None:
        return
    share = e.get("duplicate_image_target_share")
    image = e.get("sft_rows_with_image_share")
    out.print(f"SFT export ({e['format']}): {e['sft_rows']} rows from {e['sft_tasks']} distinct tasks "
              f"({e.get('sft_trajectories')} trajectories); duplicate (image, target) rows "
              f"{e['duplicate_image_target_rows']} ({'-' if share is None else f'{share:.1%}'}); rows with an image "
              f"{'-' if image is None else f'{image:.0%}'} (text-only rows go to the text_only config); "
              f"est. tokens max {e.get('est_tokens_max')} (max_length {e.get('max_length')})", highlight=False)
    screens = e.get("screens") or {}
    if screens:
        out.print("screens of SFT rows with an image: " + "; ".join(
            f"{d} {v['rows']} rows: browser {v['browser_share']:.0%}, phone bars {v['phone_bars_share']:.0%}, "
            + (f"terminal window {v['terminal_share']:.0%}, " if v.get("terminal_share") else "") +
            f"themed {v['themed_share']:.0%} (dark {v['dark_share']:.0%}, palette {v['palette_share']:.0%})"
            for d, v in screens.items()), highlight=False)
    splits = e.get("splits") or {}
    if splits:
        out.print("splits by world: " + ", ".join(f"{k} {v['sft_rows']} SFT rows / {v['rl_rows']} RL prompts / "
                                                  f"{v['tasks']} tasks / {v['worlds']} worlds"
                                                  for k, v in splits.items()), highlight=False)
