"""``zagent skills list|show|match|curate|archive`` on a folder given with --folder."""

import json

from zagent.plugins.cli import main
from zagent.plugins.skills import SkillRegistry

from .conftest import curator_model, price_skill, trajectory


def run(kernel, capsys, *argv):
    code = main(["skills", *argv], kernel=kernel)
    out = capsys.readouterr()
    return code, out.out, out.err


def with_skill(folder, clock):
    SkillRegistry(folder, clock=clock).load().register(price_skill())
    return str(folder)


def test_list_shows_name_version_and_state(kernel, capsys, folder, clock):
    """list prints one line per skill."""
    code, out, _ = run(kernel, capsys, "list", "--folder", with_skill(folder, clock))
    assert code == 0 and out.startswith("price-totals\tv1\tidle\tused 0")


def test_show_prints_the_file_and_figures(kernel, capsys, folder, clock):
    """show prints the Markdown file and a line of figures."""
    code, out, _ = run(kernel, capsys, "show", "price-totals", "--folder", with_skill(folder, clock))
    assert code == 0 and "name: price-totals" in out and "# state: idle" in out


def test_show_of_an_unknown_skill_fails(kernel, capsys, folder, clock):
    """An unknown name exits 1 and says where it looked."""
    code, _, err = run(kernel, capsys, "show", "nope", "--folder", with_skill(folder, clock))
    assert code == 1 and "no skill named 'nope'" in err


def test_match_prints_scores_and_the_best(kernel, capsys, folder, clock):
    """match ranks the skills for the text and names the best one."""
    code, out, _ = run(kernel, capsys, "match", "What do 2 pears cost together?", "--folder", with_skill(folder, clock))
    assert code == 0 and out.strip().endswith("best: price-totals")


def test_archive_moves_the_skill_out_of_matching(kernel, capsys, folder, clock):
    """archive sets the state; list hides archived skills unless --all."""
    path = with_skill(folder, clock)
    assert run(kernel, capsys, "archive", "price-totals", "--folder", path)[0] == 0
    assert run(kernel, capsys, "list", "--folder", path)[1].startswith("(no skills")
    assert "archived" in run(kernel, capsys, "list", "--all", "--folder", path)[1]


def test_curate_learns_from_a_trajectory_folder(kernel, capsys, folder, tmp_path):
    """curate TRAJECTORY_DIR judges each run with --model and reports what it created."""
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "a.jsonl").write_text(json.dumps(trajectory()) + "\n")

    class Judge:  # a provider, so that --model judge:x resolves to a scripted model
        def zagent_register_providers(self, register):
            from zagent.plugins.offline.scripted import ScriptedLLM

            register("judge", lambda model, **options: ScriptedLLM.build(model, replies=[curator_model()] * 4))

    kernel.add_plugin(Judge())
    code, out, _ = run(kernel, capsys, "curate", str(runs), "--model", "judge:x", "--folder", str(folder))
    assert code == 0 and "created -> price-totals v1" in out
    assert (folder / "price-totals.md").exists()
