import pytest

from agent.games.tangram.config import PROJECT_DIR, Config, ConfigError, load_config


def test_no_config_means_offline_planner_on_localhost_5000():
    cfg = load_config(None)
    assert cfg.player == "planner"
    assert (cfg.server.host, cfg.server.port) == ("localhost", 5000)
    assert cfg.server.max_frame_bytes >= 16 * 1024 * 1024
    assert cfg.turn.deadline == 60


@pytest.mark.parametrize("name", ["gpt4o.yaml", "ollama.yaml", "offline.yaml"])
def test_shipped_configs_are_valid(name):
    cfg = load_config(PROJECT_DIR / "configs" / name)
    assert cfg.prompts_dir.is_dir()


def test_gpt4o_sets_no_base_url_so_the_sdk_env_applies():
    assert load_config(PROJECT_DIR / "configs" / "gpt4o.yaml").llm.base_url is None


@pytest.mark.parametrize("text, fragment", [
    ("player: robot", "field 'player'"),
    ("llm:\n  temperature: 7", "field 'llm.temperature'"),
    ("turn:\n  deadlin: 5", "field 'turn.deadlin'"),
    ("- a\n- b", "mapping"),
    ("llm: [unclosed", "not valid YAML"),
])
def test_invalid_configs_name_the_field(tmp_path, text, fragment):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=fragment):
        load_config(path)


def test_unreadable_config(tmp_path):
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "missing.yaml")


def test_api_key_comes_from_the_named_variable(monkeypatch):
    cfg = Config.model_validate({"llm": {"api_key_env": "MY_KEY"}})
    monkeypatch.delenv("MY_KEY", raising=False)
    assert cfg.api_key() is None
    monkeypatch.setenv("MY_KEY", " sk-abc ")
    assert cfg.api_key() == "sk-abc"
