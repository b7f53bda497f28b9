"""Realistic model replies for the planner, agent generator and reviewer, and a prompt-routing reply function."""

import json
import re

PLAN = {"sub_tasks": [
    {"name": "research", "description": "Collect the key facts the report needs", "reason": "A report needs facts",
     "inputs": [{"name": "goal", "type": "string", "description": "the report's subject"}],
     "outputs": [{"name": "facts", "type": "string", "description": "key facts, one per line"}]},
    {"name": "outline", "description": "Outline the report from the facts", "reason": "Structure first",
     "inputs": [{"name": "goal", "type": "string"}, {"name": "facts", "type": "string"}],
     "outputs": [{"name": "outline", "type": "string"}]},
    {"name": "write_intro", "description": "Write the introduction", "reason": "Readers need context",
     "inputs": [{"name": "outline", "type": "string"}], "outputs": [{"name": "intro", "type": "string"}]},
    {"name": "write_body", "description": "Write the body from outline and facts", "reason": "The substance",
     "inputs": [{"name": "outline", "type": "string"}, {"name": "facts", "type": "string"}],
     "outputs": [{"name": "body", "type": "string"}]},
    {"name": "assemble", "description": "Assemble introduction and body into the report", "reason": "One document",
     "inputs": [{"name": "intro", "type": "string"}, {"name": "body", "type": "string"}],
     "outputs": [{"name": "report", "type": "string"}]},
]}

OUTPUT_OF = {t["name"]: t["outputs"][0]["name"] for t in PLAN["sub_tasks"]}
INPUTS_OF = {t["name"]: [i["name"] for i in t["inputs"]] for t in PLAN["sub_tasks"]}


def fenced(data, prose="Here is the plan for the goal."):
    return f"{prose}\n\n```json\n{json.dumps(data, indent=2)}\n```\n\nLet me know if you want changes."


def plan_reply(plan=None):
    return fenced(plan or PLAN)


def generated_agent(task):
    """A generated spec whose prompt marks its inputs as name=<<{name}>> so the run can be traced."""
    inputs = INPUTS_OF[task]
    prompt = f"TASK {task}. " + " ".join(f"{i}=<<{{{i}}}>>" for i in inputs)
    return {"name": "".join(p.capitalize() for p in task.split("_")) + "Agent",
            "description": f"Does {task}", "inputs": [{"name": i} for i in inputs],
            "outputs": [{"name": OUTPUT_OF[task]}], "prompt": prompt, "tool_names": []}


def generator_reply(prompt):
    task = re.search(r'"name": "(\w+)"', prompt.split("The sub-task:", 1)[1]).group(1)
    return fenced({"selected_agents": [], "generated_agents": [generated_agent(task)]},
                  prose=f"No existing agent fits {task}, so I designed one.")


APPROVED = '```json\n{"approved": true, "suggestions": []}\n```'


def agent_reply(prompt):
    """What a generated agent answers: its output section holding task[input=value, ...]."""
    task = re.search(r"TASK (\w+)\.", prompt).group(1)
    values = re.findall(r"(\w+)=<<(?:<input>)?(.*?)(?:</input>)?>>", prompt)  # inputs come <input>-tagged
    text = f"{task}[" + ", ".join(f"{k}={v}" for k, v in values) + "]"
    return f"## {OUTPUT_OF[task]}\n{text}"


def router(review=APPROVED):
    """A ``reply(request)`` answering each role by what its prompt says."""
    def reply(request):
        prompt = request.messages[-1].content
        role = "\n".join(m.content or "" for m in request.messages)  # a template's system section is the system message
        if "You are a task planner" in role:
            return plan_reply()
        if "You are an agent designer" in role:
            return generator_reply(prompt)
        if "You are a workflow reviewer" in role:
            return review
        if "TASK " in prompt:
            return agent_reply(prompt)
        raise AssertionError(f"unexpected prompt: {prompt[:200]}")
    return reply
