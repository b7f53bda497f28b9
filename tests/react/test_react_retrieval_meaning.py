"""Tool retrieval by meaning without a model download: the built-in concept table (``lexicon``).

The survey (003), 4.2: "ToolRetriever ... 用query embedding与所有tool embedding算cosine相似度 ... 返回相似度Top-3的工具"
(rank tools by the similarity of the query to each tool, return the top 3) and "为每个工具注入同义词扩展"
(give each tool synonyms).
"""

import json
import pathlib

import pytest

from zagent import Tool
from zagent.plugins.react.retrieval import select_tools

DATA = pathlib.Path(__file__).resolve().parents[2] / "bench" / "data" / "tool_retrieval.json"
ROWS = json.loads(DATA.read_text())["tools"]
TOOLS = [Tool(name=n, description=d, handler=lambda **_: None, parameters={"type": "object"}) for n, d, _q in ROWS][::-1]
# reversed: ties go to the tool listed first, and the weather tool must not win by being first
# a fixed subset of the bench's requests, none sharing a word with its tool's name or description
SUBSET = [("will it rain in Paris tomorrow", "forecast"), ("do I need an umbrella today", "forecast"),
          ("how are Apple shares doing", "stock_price"), ("how much is one bitcoin worth", "crypto_price"),
          ("euro to pound exchange rate", "convert_currency"), ("mail the report to Anna", "send_email"),
          ("fly me to Rome on March 3", "book_flight"), ("put on some jazz", "play_music"),
          ("how do you say thank you in Japanese", "translate_text"), ("where is my package", "order_status"),
          ("get me an uber to the airport", "book_ride"), ("what does ubiquitous mean", "define_word")]


@pytest.mark.parametrize("query,expected", SUBSET)
def test_a_request_finds_its_tool_by_meaning(query, expected):
    """003: "返回相似度Top-3的工具" (the top 3 tools by similarity): of 63 tools, the one meant is among the
    3 chosen, though the request shares no word with it ("will it rain" -> ``forecast``, not ``stock_price``)."""
    assert expected in [t.name for t in select_tools(TOOLS, query, limit=3)]


def test_will_it_rain_picks_the_weather_tool_first():
    """003: the ToolRetriever's "语义匹配" (matching by meaning): "will it rain" ranks the weather tool first."""
    assert [t.name for t in select_tools(TOOLS, "will it rain", limit=1)] == ["forecast"]


def test_a_tools_synonyms_find_it():
    """003: "只需在定义工具时加synonyms[股价, 行情, 市值]" (add synonyms when defining the tool): a word only in
    ``metadata["synonyms"]`` finds that tool."""
    quote = Tool(name="quote", description="Latest price of a ticker.", handler=lambda **_: None,
                 parameters={"type": "object"}, metadata={"synonyms": ["股价", "行情", "市值"]})
    chosen = select_tools([*TOOLS, quote], "茅台 行情", limit=1)
    assert [t.name for t in chosen] == ["quote"]
