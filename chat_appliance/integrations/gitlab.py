"""GitLab: the X-GitLab-Event header names the hook ("Push Hook", "Merge Request Hook", ...);
issues, merge requests and wiki pages add the object's action, notes the kind of thing commented
on ("Note Hook MergeRequest"). A "System Hook" names its event in the payload; jobs arrive as
"Job Hook" or, from older GitLab, "Build Hook". With topic= in the URL, each message starts with
a link to the project, since the topic no longer says which."""

from __future__ import annotations

import re
from datetime import datetime, timezone

from chat_appliance.integrations import git_messages as git
from chat_appliance.integrations.base import Integration, UnsupportedEvent, WebhookRequest

EMPTY_SHA = "0" * 40


def repo_name(p) -> str:
    if "project" in p:
        return p["project"]["name"]
    return p["repository"]["name"]  # Job Hook payloads have no project


def project_homepage(p) -> str:
    if "project" in p:
        return p["project"]["web_url"]
    return p["repository"]["homepage"]


def user_name(p) -> str:
    return p["user_name"]


def issue_user_name(p) -> str:
    return p["user"]["name"]


def branch_of(p) -> str:
    return p["ref"].replace("refs/heads/", "")


def title_if(hook: WebhookRequest, title: str) -> str | None:
    return title if hook.topic_given else None


def assignees_by_name(p) -> list[dict[str, str]]:
    """The assignees (or the one assignee), named by their full names."""
    found = p.get("assignees") or ([p["assignee"]] if p.get("assignee") else [])
    return [{"username": assignee["name"]} for assignee in found]


# --- pushes and tags -------------------------------------------------------------------------


def push(hook: WebhookRequest) -> str:
    p = hook.payload
    if p.get("after") == EMPTY_SHA:
        return git.remove_branch_message(user_name(p), branch_of(p))
    compare_url = f"{project_homepage(p)}/-/compare/{p['before']}...{p['after']}"
    commits = [{"name": c["author"]["name"], "sha": c["id"], "message": c["message"], "url": c["url"]}
               for c in p["commits"]]
    return git.push_commits_message(user_name(p), compare_url, branch_of(p), commits)


def tag_push(hook: WebhookRequest) -> str:
    p = hook.payload
    return git.push_tag_message(user_name(p), p["ref"].replace("refs/tags/", ""),
                                action="pushed" if p.get("checkout_sha") else "removed")


def test_hook(hook: WebhookRequest) -> str:
    return f"Webhook for **{repo_name(hook.payload)}** has been configured successfully! :tada:"


# --- issues, merge requests, notes, wiki -----------------------------------------------------


def issue_created(hook: WebhookRequest) -> str:
    p = hook.payload
    attributes = p["object_attributes"]
    description = attributes.get("description")
    if description:
        # GitLab's issue templates leave hidden HTML comments: not for the chat.
        description = re.sub(r"<!--.*?-->", "", description, flags=re.DOTALL).rstrip()
    else:
        description = None
    return git.issue_message(user_name=issue_user_name(p), action="created", url=attributes["url"],
                             number=attributes["iid"], message=description, assignees=assignees_by_name(p),
                             title=title_if(hook, attributes["title"]))


def issue_action(action: str):
    def body(hook: WebhookRequest) -> str:
        p = hook.payload
        attributes = p["object_attributes"]
        return git.issue_message(user_name=issue_user_name(p), action=action, url=attributes["url"],
                                 number=attributes["iid"], title=title_if(hook, attributes["title"]))
    return body


def merge_request_action(action: str):
    def body(hook: WebhookRequest) -> str:
        p = hook.payload
        mr = p["object_attributes"]
        source = target = None
        if action == "merged":
            source, target = mr["source_branch"], mr["target_branch"]
        return git.pull_request_message(user_name=issue_user_name(p), action=action, url=mr["url"],
                                        number=mr["iid"], target_branch=source, base_branch=target, type="MR",
                                        title=title_if(hook, mr["title"]))
    return body


def merge_request_opened_or_updated(action: str):
    def body(hook: WebhookRequest) -> str:
        p = hook.payload
        mr = p["object_attributes"]
        return git.pull_request_message(
            user_name=issue_user_name(p), action=action, url=mr["url"], number=mr["iid"],
            target_branch=mr["source_branch"] if action == "created" else None,
            base_branch=mr["target_branch"] if action == "created" else None,
            message=mr["description"], assignees=assignees_by_name(p), type="MR",
            title=title_if(hook, mr["title"]))
    return body


def merge_request_updated(hook: WebhookRequest) -> str:
    # An update with an old revision is new commits; otherwise the description or fields changed.
    if hook.payload["object_attributes"].get("oldrev"):
        return merge_request_action("added commit(s) to")(hook)
    return merge_request_opened_or_updated("updated")(hook)


def note_on_commit(hook: WebhookRequest) -> str:
    p = hook.payload
    note = p["object_attributes"]
    return git.commit_comment_message(issue_user_name(p), f"[commented]({note['url']})", p["commit"]["url"],
                                      p["commit"]["id"], note["note"])


def note_on(kind: str, key: str, number_key: str = "iid"):
    """A comment on a merge request, an issue or a snippet."""
    def body(hook: WebhookRequest) -> str:
        p = hook.payload
        note = p["object_attributes"]
        item = p[key]
        if key == "snippet" and "url" not in item:  # snippets have a URL from GitLab 16.1 on
            url = f"{p['project']['web_url']}/-/snippets/{item['id']}"
        else:
            url = item["url"]
        return git.pull_request_message(user_name=issue_user_name(p), action=f"[commented]({note['url']}) on",
                                        url=url, number=item[number_key], message=note["note"], type=kind,
                                        title=title_if(hook, item["title"]))
    return body


def design_parts(note, repository_url: str) -> tuple[str, str, str]:
    """(comment URL, design URL, design name): design payloads carry no issue, only the design's
    path, "designs/issue-<n>/<name>"."""
    _, issue_part, design_name = note["position"]["new_path"].split("/")
    design_url = f"{repository_url}/-/issues/{issue_part.split('-')[-1]}/designs/{design_name}"
    return f"{design_url}#note_{note['id']}", design_url, design_name


def note_on_design(hook: WebhookRequest) -> str:
    p = hook.payload
    note = p["object_attributes"]
    comment_url, design_url, design_name = design_parts(note, p["repository"]["homepage"])
    return (f"{issue_user_name(p)} [commented]({comment_url}) on design [{design_name}]({design_url}):\n"
            f"{git.quote(note['note'])}")


def wiki_page(action: str):
    def body(hook: WebhookRequest) -> str:
        p = hook.payload
        page = p["object_attributes"]
        return f'{issue_user_name(p)} {action} [wiki page "{page["title"]}"]({page["url"]}).'
    return body


# --- CI, releases, flags, tokens, deployments ------------------------------------------------


def status_action(status: str, created: str) -> str:
    if status == created:
        return "was created"
    if status == "running":
        return "started"
    return f"changed status to {status}"


def build(hook: WebhookRequest) -> str:
    p = hook.payload
    action = status_action(p["build_status"], "created")
    return f"Build {p['build_name']} from {p['build_stage']} stage {action}."


def pipeline(hook: WebhookRequest) -> str:
    p = hook.payload
    attributes = p["object_attributes"]
    action = status_action(attributes["status"], "pending")
    home = project_homepage(p)
    lines = ""
    for job in p["builds"]:
        job_url = f"{home}/-/jobs/{job['id']}"
        artifact = (job.get("artifacts_file") or {}).get("filename")
        lines += f"* [{job['name']}]({job_url}) - {job['status']}\n"
        if artifact:
            lines += (f"  * built artifact: *{artifact}* [[Browse]({job_url}/artifacts/browse)|"
                      f"[Download]({job_url}/artifacts/download)]\n")
    return (f"[Pipeline ({attributes['id']})]({home}/-/pipelines/{attributes['id']}) {action} with build(s):\n"
            f"{lines[:-1]}.")


def release(hook: WebhookRequest) -> str:
    p = hook.payload
    action = f"{p['action']}d"
    if p["action"] == "delete":
        return git.release_message_without_user(action, p["tag"], p["name"], None)
    text = git.release_message_without_user(action, p["tag"], p["name"], p["url"])
    if "description" in p:
        text += git.quote(p["description"])
    return text


def feature_flag(hook: WebhookRequest) -> str:
    p = hook.payload
    flag = p["object_attributes"]
    action = "activated" if flag["active"] else "deactivated"
    return (f"{p['user']['username']} {action} the feature flag "
            f"[{flag['name']}]({p['project']['web_url']}/-/feature_flags).")


def access_token_expiry(hook: WebhookRequest) -> str:
    p = hook.payload
    token = p["object_attributes"]
    if "group" in p:
        url = f"https://gitlab.com/groups/{p['group']['group_path']}/-/settings/access_tokens"
    else:
        url = f"{p['project']['web_url']}/-/settings/access_tokens"
    day = datetime.strptime(token["expires_at"], "%Y-%m-%d").replace(tzinfo=timezone.utc)
    return f"The access token [{token['name']}]({url}) will expire on {day.strftime('%b %d, %Y')}."


def deployment(hook: WebhookRequest) -> str:
    p = hook.payload
    user = f"[{p['user']['name']}]({p['user_url']})"
    deployable_url = p.get("deployable_url") or ""
    what = f"[deployment]({deployable_url})" if deployable_url else "deployment"
    commit_url = p["commit_url"]
    sentences = {
        "running": f"{user} started a new {what}:\n> [{commit_url.split('/')[-1][:7]}]({commit_url}) "
                   f"{p['commit_title']}",
        "success": f"The {what} was successful.",
        "failed": f"The {what} failed.",
        "canceled": f"The {what} was canceled.",
    }
    return sentences[p["status"]]


BODIES = {
    "Push Hook": push,
    "Tag Push Hook": tag_push,
    "Test Hook": test_hook,
    "Issue Hook open": issue_created,
    "Issue Hook close": issue_action("closed"),
    "Issue Hook reopen": issue_action("reopened"),
    "Issue Hook update": issue_action("updated"),
    "Confidential Issue Hook open": issue_created,
    "Confidential Issue Hook close": issue_action("closed"),
    "Confidential Issue Hook reopen": issue_action("reopened"),
    "Confidential Issue Hook update": issue_action("updated"),
    "Note Hook Commit": note_on_commit,
    "Note Hook MergeRequest": note_on("MR", "merge_request"),
    "Note Hook Issue": note_on("issue", "issue"),
    "Confidential Note Hook Issue": note_on("issue", "issue"),
    "Note Hook DesignManagement::Design": note_on_design,
    "Confidential Note Hook DesignManagement::Design": note_on_design,
    "Note Hook Snippet": note_on("snippet", "snippet", "id"),
    "Merge Request Hook approved": merge_request_action("approved"),
    "Merge Request Hook unapproved": merge_request_action("unapproved"),
    # approval and unapproval come only when more than one approval is required.
    "Merge Request Hook approval": merge_request_action("approval"),
    "Merge Request Hook unapproval": merge_request_action("unapproval"),
    "Merge Request Hook open": merge_request_opened_or_updated("created"),
    "Merge Request Hook update": merge_request_updated,
    "Merge Request Hook merge": merge_request_action("merged"),
    "Merge Request Hook close": merge_request_action("closed"),
    "Merge Request Hook reopen": merge_request_action("reopened"),
    "Wiki Page Hook create": wiki_page("created"),
    "Wiki Page Hook update": wiki_page("updated"),
    "Job Hook": build,
    "Build Hook": build,
    "Pipeline Hook": pipeline,
    "Release Hook": release,
    "Feature Flag Hook": feature_flag,
    "Resource Access Token Hook": access_token_expiry,
    "Deployment Hook": deployment,
}


def topic_for(hook: WebhookRequest, event: str) -> str:
    p = hook.payload
    with_title = hook.flag("use_merge_request_title", True)
    if event == "Push Hook":
        return f"{repo_name(p)} / {branch_of(p)}"
    if event in ("Job Hook", "Build Hook"):
        return f"{p['repository']['name']} / {branch_of(p)}"
    if event == "Pipeline Hook":
        return f"{repo_name(p)} / {p['object_attributes']['ref'].replace('refs/heads/', '')}"
    if event.startswith("Merge Request Hook"):
        mr = p["object_attributes"]
        return git.TOPIC_WITH_PR_OR_ISSUE.format(repo=repo_name(p), type="MR", id=mr["iid"],
                                                 title=mr["title"] if with_title else "")
    if event.startswith(("Issue Hook", "Confidential Issue Hook")):
        item = p["object_attributes"]
        return git.TOPIC_WITH_PR_OR_ISSUE.format(repo=repo_name(p), type="issue", id=item["iid"], title=item["title"])
    if event in ("Note Hook Issue", "Confidential Note Hook Issue"):
        item = p["issue"]
        return git.TOPIC_WITH_PR_OR_ISSUE.format(repo=repo_name(p), type="issue", id=item["iid"], title=item["title"])
    if event.endswith("Note Hook DesignManagement::Design"):
        return f"{repo_name(p)} / design {p['object_attributes']['position']['new_path'].split('/')[-1]}"
    if event == "Note Hook MergeRequest":
        mr = p["merge_request"]
        return git.TOPIC_WITH_PR_OR_ISSUE.format(repo=repo_name(p), type="MR", id=mr["iid"],
                                                 title=mr["title"] if with_title else "")
    if event == "Note Hook Snippet":
        item = p["snippet"]
        return git.TOPIC_WITH_PR_OR_ISSUE.format(repo=repo_name(p), type="snippet", id=item["id"], title=item["title"])
    if event == "Resource Access Token Hook" and p.get("group"):
        return p["group"]["group_name"]
    if event == "Deployment Hook":
        return f"{repo_name(p)} / {p['environment']}"
    return repo_name(p)


def formatter(event: str):
    def format_event(hook: WebhookRequest) -> tuple[str, str]:
        body = BODIES[event](hook)
        if hook.topic_given:
            body = f"[[{repo_name(hook.payload)}]({project_homepage(hook.payload)})] {body}"
        return topic_for(hook, event).strip(), body
    return format_event


def find_event(hook: WebhookRequest) -> str | None:
    p = hook.payload
    event = hook.header("X-GitLab-Event") or ""
    if event == "System Hook":
        # A system hook names its event in the payload ("merge_request" -> "Merge Request Hook").
        name = p["event_name"] if "event_name" in p else p["object_kind"]
        event = name.split("__")[0].replace("_", " ").title() + " Hook"
    if event in ("Confidential Issue Hook", "Issue Hook", "Merge Request Hook", "Wiki Page Hook"):
        event = f"{event} {p['object_attributes'].get('action', 'open')}"
    elif event in ("Confidential Note Hook", "Note Hook"):
        event = f"{event} {p['object_attributes']['noteable_type']}"
    elif event == "Push Hook" and not hook.branch_wanted(branch_of(p)):
        return None
    if event in BODIES:
        return event
    raise UnsupportedEvent(event)


INTEGRATION = Integration(
    name="gitlab",
    display_name="GitLab",
    description="Pushes, merge requests, issues, comments, pipelines, jobs, releases and more from GitLab.",
    event_header="X-GitLab-Event",
    find_event=find_event,
    formatters={event: formatter(event) for event in BODIES},
    options={
        "branches": "Comma-separated branch names: pushes to other branches post nothing.",
        "use_merge_request_title": "false: merge request topics leave out the title (`repo / MR #5`).",
    },
)
