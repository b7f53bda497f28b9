"""Tool retrieval (``zagent.plugins.react.retrieval``): offer only the tools relevant to a request."""

from zagent import Kernel, Tool, run_sync
from zagent.plugins.react.retrieval import aselect_tools, select_tools, tokenize

CATALOGUE = [
    ("get_weather", "Current weather forecast for a city: temperature, rain, wind.", {"city": "City name"}),
    ("convert_currency", "Convert an amount of money between currencies at today's exchange rate.",
     {"amount": "Amount", "to": "Target currency code"}),
    ("send_email", "Send an email message to a recipient.", {"to": "Recipient address", "body": "Text"}),
    ("read_file", "Read a text file from disk.", {"path": "File path"}),
    ("write_file", "Write text to a file on disk.", {"path": "File path", "text": "Content"}),
    ("delete_file", "Delete a file from disk.", {"path": "File path"}),
    ("list_directory", "List the entries of a directory.", {"path": "Directory path"}),
    ("web_search", "Search the web for pages matching a query.", {"query": "Search terms"}),
    ("fetch_url", "Download a web page by URL.", {"url": "Address of the page"}),
    ("translate_text", "Translate text into another language.", {"text": "Text", "language": "Target language"}),
    ("calculator", "Evaluate an arithmetic expression.", {"expression": "Expression like 2+3*4"}),
    ("create_calendar_event", "Create an event in the calendar with a date and time.",
     {"title": "Title", "start": "Start time"}),
    ("list_calendar_events", "List upcoming calendar events.", {"days": "How many days ahead"}),
    ("stock_price", "Latest stock market price of a ticker symbol.", {"ticker": "Symbol like AAPL"}),
    ("run_sql", "Run an SQL query against the database.", {"sql": "SQL statement"}),
    ("create_ticket", "Open a support ticket in the issue tracker.", {"title": "Title", "body": "Details"}),
    ("close_ticket", "Close a support ticket.", {"ticket_id": "Ticket number"}),
    ("git_commit", "Commit staged changes to the git repository.", {"message": "Commit message"}),
    ("git_diff", "Show the diff of uncommitted changes in the repository.", {}),
    ("run_tests", "Run the project's unit tests with pytest.", {"pattern": "Test selection"}),
    ("resize_image", "Resize an image to a width and height.", {"path": "Image file", "width": "Pixels"}),
    ("ocr_image", "Extract printed text from an image (OCR).", {"path": "Image file"}),
    ("transcribe_audio", "Transcribe speech in an audio recording to text.", {"path": "Audio file"}),
    ("text_to_speech", "Speak text aloud with a synthetic voice.", {"text": "Text"}),
    ("geocode", "Find latitude and longitude of a street address.", {"address": "Street address"}),
    ("route_directions", "Driving or walking directions between two places.", {"origin": "From", "destination": "To"}),
    ("book_flight", "Book a flight ticket between airports on a date.", {"origin": "Airport", "date": "Day"}),
    ("hotel_search", "Find hotels available in a city for given nights.", {"city": "City", "nights": "Nights"}),
    ("restaurant_search", "Find restaurants nearby by cuisine.", {"cuisine": "Kind of food"}),
    ("news_headlines", "Top news headlines of the day by topic.", {"topic": "Topic"}),
    ("wikipedia_lookup", "Look up an encyclopedia article summary.", {"title": "Article title"}),
    ("dictionary_define", "Give the dictionary definition of a word.", {"word": "Word"}),
    ("unit_convert", "Convert between units of measurement like miles and kilometres.",
     {"value": "Number", "unit": "Unit"}),
    ("timezone_now", "Current local time in a timezone.", {"zone": "IANA zone"}),
    ("set_reminder", "Set a reminder notification at a time.", {"text": "What", "at": "When"}),
    ("slack_post", "Post a chat message to a Slack channel.", {"channel": "Channel", "text": "Message"}),
    ("contacts_lookup", "Find a person's phone number in the address book.", {"name": "Person"}),
    ("pdf_extract", "Extract the text of a PDF document.", {"path": "PDF file"}),
    ("summarize_text", "Summarise a long text into a few sentences.", {"text": "Text"}),
    ("sentiment", "Classify the sentiment of a review as positive or negative.", {"text": "Review"}),
    ("random_number", "Pick a random integer in a range.", {"low": "Lowest", "high": "Highest"}),
    ("qr_code", "Generate a QR code image for a link.", {"data": "Content"}),
    ("shorten_url", "Shorten a long link.", {"url": "Link"}),
    ("password_generate", "Generate a strong random password.", {"length": "Characters"}),
    ("docker_ps", "List running docker containers.", {}),
    ("kubectl_get_pods", "List pods in a kubernetes namespace.", {"namespace": "Namespace"}),
    ("http_status", "Check whether a website is up and its HTTP status.", {"url": "Site"}),
    ("crypto_price", "Price of a cryptocurrency like bitcoin.", {"coin": "Coin"}),
    ("recipe_search", "Find cooking recipes for ingredients.", {"ingredients": "What you have"}),
    ("movie_showtimes", "Cinema showtimes for a film today.", {"film": "Film title"}),
]


def make_tool(name, description, params):
    schema = {"type": "object", "properties": {p: {"type": "string", "description": d} for p, d in params.items()}}
    return Tool(name=name, description=description, handler=lambda **kw: None, parameters=schema)


TOOLS = [make_tool(*entry) for entry in CATALOGUE]


def names(tools):
    return [t.name for t in tools]


def test_catalogue_has_fifty_tools():
    """The fixture catalogue really has 50 distinct tools."""
    assert len(set(names(TOOLS))) == 50


def test_weather_request_picks_weather_tool():
    """Among 50 tools, a weather question selects the weather tool."""
    assert "get_weather" in names(select_tools(TOOLS, "Will it rain in Paris tomorrow? Check the forecast", limit=3))


def test_currency_request_picks_currency_tool():
    """Words in parameter descriptions and descriptions count: a money question selects currency conversion."""
    chosen = names(select_tools(TOOLS, "How much is 100 dollars in euros at the exchange rate?", limit=3))
    assert "convert_currency" in chosen


def test_file_request_picks_file_tools():
    """A request about files selects the file tools first."""
    chosen = set(names(select_tools(TOOLS, "read the file config.yaml and write a new file", limit=4)))
    assert {"read_file", "write_file"} <= chosen


def test_tool_named_in_query_ranks_first():
    """A tool whose name appears verbatim in the request is always selected."""
    assert "docker_ps" in names(select_tools(TOOLS, "run docker_ps please", limit=1))


def test_limit_is_respected():
    """At most ``limit`` tools are offered when nothing is pinned."""
    assert len(select_tools(TOOLS, "weather in Rome", limit=5)) == 5


def test_pinned_tools_are_always_present():
    """Pinned tools are included whatever the request."""
    chosen = names(select_tools(TOOLS, "weather in Rome", limit=3, pinned=["calculator", "send_email"]))
    assert {"calculator", "send_email", "get_weather"} <= set(chosen) and len(chosen) == 3


def test_pinned_beyond_limit_are_all_kept():
    """More pinned tools than ``limit`` are all kept."""
    pinned = names(TOOLS[:5])
    assert names(select_tools(TOOLS, "weather", limit=2, pinned=pinned)) == pinned


def test_few_tools_are_returned_unchanged():
    """With no more tools than ``limit`` the list comes back as it was, in order."""
    assert select_tools(TOOLS[:8], "weather", limit=8) == TOOLS[:8]


def test_selection_keeps_original_order():
    """The chosen tools keep their order in the input list."""
    chosen = select_tools(TOOLS, "file directory disk", limit=5)
    positions = [TOOLS.index(t) for t in chosen]
    assert positions == sorted(positions)


def test_ties_are_deterministic():
    """A request matching nothing gives the first tools, the same each time."""
    first = select_tools(TOOLS, "zzzz qqqq", limit=4)
    assert first == TOOLS[:4] and select_tools(list(TOOLS), "zzzz qqqq", limit=4) == first


def test_tokenizer_splits_identifiers_and_folds_plurals():
    """Tokens: camelCase and snake_case split, lower case, stop words dropped, plurals folded."""
    assert tokenize("listCalendar_events for the Cities") == ["list", "calendar", "event", "city"]


class KeywordEmbedder:
    """A fake embedding model: one dimension per keyword; records what it embedded."""

    KEYWORDS = ["weather", "money", "file", "email"]

    def __init__(self, cache_key=None):
        self.batches = []
        if cache_key is not None:
            self.cache_key = cache_key

    async def aembed(self, texts):
        self.batches.append(list(texts))
        return [[float(k in t.lower()) + (0.01 if k == "email" else 0) for k in self.KEYWORDS] for t in texts]


class EmbedderPlugin:
    """A plugin registering the fake embedder, as a third party would."""

    def zagent_register_embedders(self, register):
        register("keywords", KeywordEmbedder)


def test_embedder_path_ranks_by_similarity():
    """With an embedder (from an embedder plugin), tools are ranked by embedding similarity."""
    k = Kernel(plugins=[EmbedderPlugin()], entry_points=False, strict=True)
    embedder = k.embedder("keywords")
    chosen = names(run_sync(aselect_tools(TOOLS, "what is the weather like", limit=1, embedder=embedder)))
    assert chosen == ["get_weather"]


def test_embedder_caches_tool_vectors():
    """Tool embeddings are computed once per tool; later calls embed only the query."""
    embedder = KeywordEmbedder(cache_key="test-cache-1")
    run_sync(aselect_tools(TOOLS, "weather", limit=3, embedder=embedder))
    run_sync(aselect_tools(TOOLS, "email", limit=3, embedder=embedder))
    assert [len(b) for b in embedder.batches] == [51, 1]


def test_instances_of_one_embedding_model_share_the_cache():
    """A new embedder instance of the same model (same ``cache_key``) reuses the cached tool vectors."""
    first, second = KeywordEmbedder(cache_key="test-cache-2"), KeywordEmbedder(cache_key="test-cache-2")
    run_sync(aselect_tools(TOOLS, "weather", limit=3, embedder=first))
    run_sync(aselect_tools(TOOLS, "weather", limit=3, embedder=second))
    assert [len(b) for b in second.batches] == [1]


def test_embedder_path_keeps_pinned_tools():
    """Pinned tools are present on the embedding path too."""
    chosen = names(run_sync(aselect_tools(TOOLS, "weather", limit=2, pinned=["qr_code"], embedder=KeywordEmbedder())))
    assert "qr_code" in chosen and "get_weather" in chosen


def test_sync_select_with_embedder():
    """``select_tools`` with an embedder works from sync code."""
    assert "get_weather" in names(select_tools(TOOLS, "weather", limit=2, embedder=KeywordEmbedder()))


def test_failing_embedder_falls_back_to_full_text():
    """An embedder that raises does not stop retrieval: full-text scoring is used instead."""
    class Broken:
        async def aembed(self, texts):
            raise ConnectionError("embedding server down")

    chosen = names(run_sync(aselect_tools(TOOLS, "weather forecast", limit=2, embedder=Broken())))
    assert "get_weather" in chosen


def test_async_without_embedder_uses_full_text():
    """``aselect_tools`` without an embedder gives the same choice as ``select_tools``."""
    query = "send an email to Bob"
    assert run_sync(aselect_tools(TOOLS, query, limit=3)) == select_tools(TOOLS, query, limit=3)
