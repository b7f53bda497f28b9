"""The GenAI client metrics: token usage by type and operation duration, per chat call."""

from zagent.plugins.offline import scenarios


def points(reader, name):
    data = reader.get_metrics_data()
    return [p for rm in data.resource_metrics for sm in rm.scope_metrics for m in sm.metrics if m.name == name
            for p in m.data.data_points]


def test_token_usage_and_duration_histograms_follow_the_chat_calls(make_kernel, exporter, metric_reader):
    """gen_ai.client.token.usage sums match the chat spans' tokens per type; one duration sample per call."""
    scenarios.react_two_tools(make_kernel())
    chats = [s for s in exporter.get_finished_spans() if s.name.startswith("chat ")]
    tokens = {p.attributes["gen_ai.token.type"]: p.sum for p in points(metric_reader, "gen_ai.client.token.usage")}
    assert tokens == {"input": sum(s.attributes["gen_ai.usage.input_tokens"] for s in chats),
                      "output": sum(s.attributes["gen_ai.usage.output_tokens"] for s in chats)}
    [duration] = points(metric_reader, "gen_ai.client.operation.duration")
    assert duration.count == len(chats) == 2
    assert duration.attributes == {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "test",
                                   "gen_ai.request.model": "offline"}
