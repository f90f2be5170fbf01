#!/usr/bin/env python3
"""Builds specs/git/swagger.v1.json from the facts of Gitea's Swagger document.

Only facts are taken from Gitea's document, vendored in specs/git/upstream (see its SOURCE.md): paths,
operationIds, tags, parameter names and types, definitions' field names and types, status codes. Every
description is dropped and our own short summaries are written below. Run it after changing this script or the
vendored inputs; the output is committed, and it is what the server reads.

    python3 scripts/build-git-swagger.py
    python3 scripts/build-git-swagger.py --check                       # writes nothing; fails if the file differs
    python3 scripts/build-git-swagger.py --extract-from v1_json.json   # also refreshes upstream/gitea-swagger-extract.json
"""
import json
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
UPSTREAM = ROOT / "specs" / "git" / "upstream"

SUMMARIES = {
    "listAdminWorkflowJobs": "List every workflow job on the instance",
    "getAdminRunners": "List every actions runner on the instance",
    "adminCreateRunnerRegistrationToken": "Get the instance-wide runner registration token",
    "getAdminRunner": "Get one actions runner",
    "deleteAdminRunner": "Delete one actions runner",
    "updateAdminRunner": "Enable or disable one actions runner",
    "listAdminWorkflowRuns": "List every workflow run on the instance",
    "adminCronList": "List the scheduled tasks",
    "adminCronRun": "Run a scheduled task now",
    "adminGetAllEmails": "List every e-mail address",
    "adminSearchEmails": "Search e-mail addresses",
    "adminListHooks": "List system or default webhooks",
    "adminCreateHook": "Create a system or default webhook",
    "adminGetHook": "Get a system or default webhook",
    "adminDeleteHook": "Delete a system or default webhook",
    "adminEditHook": "Change a system or default webhook",
    "adminGetAllOrgs": "List every organization",
    "adminListPackages": "List every package on the instance",
    "adminUnadoptedList": "List repositories on disk without a record",
    "adminAdoptRepository": "Adopt repository files found on disk",
    "adminDeleteUnadoptedRepository": "Delete repository files that have no record",
    "adminSearchUsers": "Search users",
    "adminCreateUser": "Create a user",
    "adminDeleteUser": "Delete a user",
    "adminEditUser": "Change a user",
    "adminListUserBadges": "List a user's badges",
    "adminAddUserBadges": "Give badges to a user",
    "adminDeleteUserBadges": "Take badges from a user",
    "adminCreatePublicKey": "Add an SSH public key to a user",
    "adminDeleteUserPublicKey": "Remove an SSH public key from a user",
    "adminCreateOrg": "Create an organization owned by a user",
    "adminRenameUser": "Rename a user",
    "adminCreateRepo": "Create a repository owned by a user",
    "listGitignoresTemplates": "List the ignore-file templates",
    "getGitignoreTemplateInfo": "Get one ignore-file template",
    "listLabelTemplates": "List the label templates",
    "getLabelTemplateInfo": "Get the labels of one label template",
    "listLicenseTemplates": "List the license templates",
    "getLicenseTemplateInfo": "Get one license template with its text",
    "renderMarkdown": "Render a markdown document to HTML",
    "renderMarkdownRaw": "Render a plain-text markdown body to HTML",
    "renderMarkup": "Render a markup document to HTML",
    "notifyGetList": "List the caller's notification threads",
    "notifyReadList": "Change the status of many notification threads",
    "notifyNewAvailable": "Count the caller's unread notification threads",
    "notifyGetThread": "Get one notification thread",
    "notifyReadThread": "Change the status of one notification thread",
    "createOrgRepoDeprecated": "Create a repository in an organization (deprecated path)",
    "orgGetAll": "List the organizations visible to the caller",
    "orgCreate": "Create an organization",
    "orgGet": "Get an organization",
    "orgDelete": "Delete an organization",
    "orgEdit": "Change an organization",
    "getOrgWorkflowJobs": "List an organization's workflow jobs",
    "getOrgRunners": "List an organization's actions runners",
    "orgCreateRunnerRegistrationToken": "Get an organization's runner registration token",
    "getOrgRunner": "Get one of an organization's actions runners",
    "deleteOrgRunner": "Delete one of an organization's actions runners",
    "updateOrgRunner": "Enable or disable one of an organization's actions runners",
    "getOrgWorkflowRuns": "List an organization's workflow runs",
    "orgListActionsSecrets": "List an organization's actions secrets (names only)",
    "updateOrgSecret": "Create or replace an organization's actions secret",
    "deleteOrgSecret": "Delete an organization's actions secret",
    "issueCreateIssue": "Open an issue in a repository",
    "issueGetIssue": "Get an issue of a repository",
    "issueEditIssue": "Change an issue (title, body, state)",
    "issueCreateComment": "Comment on an issue",
}

# Operations beyond the seed's 62: the matching DELETE of organization secrets, and the minimum of
# Gitea's issue API that produces notifications and webhook events.
EXTRA_OPERATIONS = [
    ("/orgs/{org}/actions/secrets/{secretname}", "delete"),
    ("/repos/{owner}/{repo}/issues", "post"),
    ("/repos/{owner}/{repo}/issues/{index}", "get"),
    ("/repos/{owner}/{repo}/issues/{index}", "patch"),
    ("/repos/{owner}/{repo}/issues/{index}/comments", "post"),
]

# Who may call what, as Gitea's routers decide it: the token scope categories an operation needs (read for
# GET, write otherwise), whether a signed-in caller is needed, and whether only site administrators may.
PUBLIC_OPERATIONS = {
    "listGitignoresTemplates", "getGitignoreTemplateInfo", "listLabelTemplates", "getLabelTemplateInfo",
    "listLicenseTemplates", "getLicenseTemplateInfo", "orgGetAll", "orgGet",
}
TAG_SCOPES = {
    "admin": ["admin"],
    "miscellaneous": [],
    "notification": ["notification"],
    "organization": ["organization"],
    "issue": ["issue"],
}
PUBLIC_OPERATIONS.add("issueGetIssue")
OPERATION_SCOPES = {"createOrgRepoDeprecated": ["organization", "repository"], "orgGetAll": []}

# The organisation or user a path names, loaded once by the access check and handed to the handler, as Gitea's
# orgAssignment with reqOrgMembership / reqOrgOwnership and UserAssignmentAPI do. `org`: the path's {org}, 404 when
# missing or hidden from the caller, then `visible` (no more), `member` or `owner` (403 otherwise; site
# administrators are both). `user`: the path's {username}, 404 when missing; `individual` refuses organisations too.
ORG_RUNNERS = ["getOrgRunners", "getOrgRunner", "updateOrgRunner", "deleteOrgRunner", "orgCreateRunnerRegistrationToken"]
ORG_SECRETS = ["orgListActionsSecrets", "updateOrgSecret", "deleteOrgSecret"]
ORG_ACCESS = {
    "orgGet": "visible",
    "createOrgRepoDeprecated": "visible",
    "getOrgWorkflowRuns": "member",
    "getOrgWorkflowJobs": "member",
    **{operation_id: "owner" for operation_id in ["orgEdit", "orgDelete", *ORG_RUNNERS, *ORG_SECRETS]},
}
USER_BADGES = ["adminListUserBadges", "adminAddUserBadges", "adminDeleteUserBadges"]
USER_ACCESS = {
    **{operation_id: "individual" for operation_id in [*USER_BADGES, "adminCreatePublicKey", "adminDeleteUserPublicKey"]},
    "adminCreateOrg": "individual",
    "adminEditUser": "individual",
    # Deleting and renaming answer 422 for an organisation, and an organisation may own a repository.
    "adminCreateRepo": "any",
    "adminDeleteUser": "any",
    "adminRenameUser": "any",
}
PATH_ACCESS = {"org": ORG_ACCESS, "username": USER_ACCESS}


def access(operation_id, tag):
    declared = {
        "scopes": OPERATION_SCOPES.get(operation_id, TAG_SCOPES[tag]),
        "signIn": operation_id not in PUBLIC_OPERATIONS,
        "siteAdmin": tag == "admin",
    }
    if operation_id in ORG_ACCESS:
        declared["org"] = ORG_ACCESS[operation_id]
    if operation_id in USER_ACCESS:
        declared["user"] = USER_ACCESS[operation_id]
    return declared


def check_path_access(paths):
    """Every operation whose path names an organisation or a user declares how it is loaded, and no other does."""
    for path, path_item in paths.items():
        for operation in path_item.values():
            operation_id = operation["operationId"]
            for name, table in PATH_ACCESS.items():
                if (f"{{{name}}}" in path) != (operation_id in table):
                    sys.exit(f"{operation_id} ({path}): declare its {{{name}}} access in PATH_ACCESS, or only then")


# Swagger 2.0 requires a description on every response: a response written in the operation (not a reference to
# `responses`, which get their name) gets ours, since Gitea's is dropped.
RESPONSE_TEXT = {
    ("deleteAdminRunner", "204"): "The runner is deleted",
    ("deleteOrgRunner", "204"): "The runner is deleted",
    ("updateOrgSecret", "201"): "The secret is created",
    ("updateOrgSecret", "204"): "The secret is replaced",
    ("deleteOrgSecret", "204"): "The secret is deleted",
}


def describe_responses(operation):
    for status, response in operation["responses"].items():
        if "$ref" in response:
            continue
        key = (operation["operationId"], status)
        if key not in RESPONSE_TEXT:
            sys.exit(f"{key[0]} {status}: a response without $ref needs its description in RESPONSE_TEXT")
        response["description"] = RESPONSE_TEXT[key]


PARAMETER_TEXT = {
    "page": "Page number, from 1",
    "limit": "Page size",
}

PACKAGE_TYPES = [
    "alpine", "cargo", "chef", "composer", "conan", "conda", "container", "cran", "debian", "generic", "go",
    "helm", "maven", "npm", "nuget", "pub", "pypi", "rpm", "rubygems", "swift", "terraform", "vagrant",
]


# Bounds on what requests may carry, answered 422 `[Field]: MaxSize`; Gitea's Swagger document states none. Gitea's
# binding limits (modules/structs) where it has them, otherwise what the column that stores the field holds
# (migrations/), so that no value reaches the database too long for it. A TEXT column holds 65,535 bytes on MariaDB:
# `x-gatehouse-max-bytes` bounds such a field in UTF-8 bytes rather than in characters.
def chars(count):
    return {"maxLength": count}


TEXT_COLUMN = {"x-gatehouse-max-bytes": 65535}
ORG_LIMITS = {
    "full_name": chars(100),
    "email": chars(255),
    "description": chars(255),
    "website": chars(255),
    "location": chars(50),
}
# Users' addresses are also kept in email_addresses.lower_email, an indexed column of 191 characters (Gitea: 254).
USER_LIMITS = {"full_name": chars(100), "email": chars(191), "password": chars(255), "login_name": chars(255)}
HOOK_LIMITS = {
    "name": chars(255),
    "branch_filter": chars(255),
    # Sealed into a TEXT column and sent as a header: bounded well below what the column would hold.
    "authorization_header": chars(4096),
}
# The URL is also recorded with each delivery (hook_tasks.request_info, TEXT); the secret is sealed like the header.
HOOK_CONFIG_LIMITS = {"url": chars(4096), "content_type": chars(8), "secret": chars(4096)}
ISSUE_LIMITS = {"title": chars(255), "ref": chars(255), "body": TEXT_COLUMN}
FIELD_LIMITS = {
    "CreateUserOption": {"username": chars(40), **USER_LIMITS},
    "EditUserOption": {**USER_LIMITS, "website": chars(255), "location": chars(50), "description": chars(255)},
    "RenameUserOption": {"new_username": chars(40)},
    "CreateOrgOption": {"username": chars(40), **ORG_LIMITS},
    "EditOrgOption": ORG_LIMITS,
    "CreateRepoOption": {"name": chars(100), "description": chars(2048), "default_branch": chars(100)},
    "CreateKeyOption": {"title": chars(191), "key": TEXT_COLUMN},
    "CreateHookOption": HOOK_LIMITS,
    "EditHookOption": HOOK_LIMITS,
    "CreateHookOptionConfig": HOOK_CONFIG_LIMITS,
    "CreateIssueOption": ISSUE_LIMITS,
    "EditIssueOption": ISSUE_LIMITS,
    "CreateIssueCommentOption": {"body": TEXT_COLUMN},
    # A slug is badges.slug; a request names a handful of badges, never thousands.
    "UserBadgeOption": {"badge_slugs": {"maxItems": 100, "items": {"type": "string", **chars(191)}}},
}
PATH_PARAMETER_LIMITS = {"secretname": chars(191)}


def bound(schema, field, limits):
    """Adds a field's limits to an object schema, declaring the field (a string) where a map left it implicit."""
    schema.setdefault("properties", {}).setdefault(field, {"type": "string"}).update(limits)


def add_limits(paths, definitions):
    for name, fields in FIELD_LIMITS.items():
        for field, limits in fields.items():
            bound(definitions[name], field, limits)
    for field, limits in HOOK_CONFIG_LIMITS.items():
        bound(definitions["EditHookOption"]["properties"]["config"], field, limits)
    for path_item in paths.values():
        for operation in path_item.values():
            for parameter in operation.get("parameters", []):
                if parameter["in"] == "path" and parameter["name"] in PATH_PARAMETER_LIMITS:
                    parameter.update(PATH_PARAMETER_LIMITS[parameter["name"]])


# The Go structs behind the request bodies (modules/structs), their fields in declaration order. Gitea's binder
# (gitea.com/go-chi/binding) checks the fields in this order and reports the first failure by the field's Go name
# (`[NewName]: Required`); it reads a form body (urlencoded or multipart) by the field's `form` tag, or else by the Go
# name in snake_case (util.ToSnakeCase: `NewName` is `new_name`, `UserName` is `user_name`). No struct here has a
# `form` tag. The build orders each definition's properties this way, names every property's Go field
# (`x-go-name`, which Gitea's document leaves out where it equals the JSON name or the field is a reference), and
# gives every field a form can fill its form name (`x-gatehouse-form`): maps, structs and times it cannot.
BODY_STRUCTS = {
    "CreateHookOption": ["Type", "Config", "Events", "BranchFilter", "AuthorizationHeader", "Active", "Name"],
    "CreateIssueCommentOption": ["Body"],
    "CreateIssueOption": [
        "Title", "Body", "Ref", "Assignee", "Assignees", "Deadline", "Milestone", "Labels", "Projects", "Closed",
    ],
    "CreateKeyOption": ["Title", "Key", "ReadOnly"],
    "CreateOrUpdateSecretOption": ["Data", "Description"],
    "CreateOrgOption": [
        "UserName", "FullName", "Email", "Description", "Website", "Location", "Visibility", "RepoAdminChangeTeamAccess",
    ],
    "CreateRepoOption": [
        "Name", "Description", "Private", "IssueLabels", "AutoInit", "Template", "Gitignores", "License", "Readme",
        "DefaultBranch", "TrustModel", "ObjectFormatName",
    ],
    "CreateUserOption": [
        "SourceID", "LoginName", "Username", "FullName", "Email", "Password", "MustChangePassword", "SendNotify",
        "Restricted", "Visibility", "Created",
    ],
    "EditActionRunnerOption": ["Disabled"],
    "EditHookOption": ["Config", "Events", "BranchFilter", "AuthorizationHeader", "Active", "Name"],
    "EditIssueOption": [
        "Title", "Body", "Ref", "Assignee", "Assignees", "Milestone", "Projects", "State", "Deadline", "RemoveDeadline",
        "ContentVersion",
    ],
    "EditOrgOption": ["FullName", "Email", "Description", "Website", "Location", "Visibility", "RepoAdminChangeTeamAccess"],
    "EditUserOption": [
        "SourceID", "LoginName", "Email", "FullName", "Password", "MustChangePassword", "Website", "Location",
        "Description", "Active", "Admin", "AllowGitHook", "AllowImportLocal", "MaxRepoCreation", "ProhibitLogin",
        "AllowCreateOrganization", "Restricted", "Visibility",
    ],
    "MarkdownOption": ["Text", "Mode", "Context", "Wiki"],
    "MarkupOption": ["Text", "Mode", "Context", "Wiki", "FilePath"],
    "RenameUserOption": ["NewName"],
    "UserBadgeOption": ["BadgeSlugs"],
}
FORM_SCALARS = {"string", "integer", "boolean"}
# The Go types the JSON decoder names in its errors (`json: cannot unmarshal number into Go struct field
# CreateOrgOption.visibility of type structs.VisibilityString`) where the document's type does not tell them: named
# types, and `int` (the document says int64 of every integer). Written as `x-go-type`.
GO_TYPES = {
    ("CreateOrgOption", "Visibility"): "structs.VisibilityString",
    ("CreateRepoOption", "ObjectFormatName"): "structs.ObjectFormatName",
    ("CreateUserOption", "Visibility"): "structs.VisibilityString",
    ("EditIssueOption", "ContentVersion"): "int",
    ("EditOrgOption", "Visibility"): "structs.VisibilityString",
    ("EditUserOption", "MaxRepoCreation"): "int",
    ("EditUserOption", "Visibility"): "structs.VisibilityString",
}

# Enums Gitea's document lists but its binder does not check (no `In(...)` rule): the handler answers for them.
UNCHECKED_ENUMS = {"CreateHookOption": ["type"]}
# Fields Gitea's document marks required that its binder does not require (no `Required` rule): left optional here.
UNCHECKED_REQUIRED = {"EditUserOption": ["source_id"]}


def to_snake_case(name):
    """Gitea's util.ToSnakeCase for Go identifiers: `SourceID` is `source_id`, `HTTPServer` is `http_server`."""
    words = re.findall(r"[A-Z]+(?=[A-Z][a-z0-9]|$)|[A-Z]?[a-z0-9]+|[A-Z]+", name)
    return "_".join(word.lower() for word in words)


def form_bindable(prop, definitions):
    """Whether Gitea's form binder can fill the field: a scalar, or a list of scalars; never a map, struct or time."""
    if "$ref" in prop:
        return False
    if prop.get("type") == "array":
        return form_bindable(prop.get("items", {}), definitions)
    return prop.get("type") in FORM_SCALARS and prop.get("format") != "date-time"


def add_go_fields(definitions):
    for name, go_fields in BODY_STRUCTS.items():
        schema = definitions[name]
        properties = schema.get("properties", {})
        ordered = {}
        for go_name in go_fields:
            matches = [key for key, prop in properties.items() if prop.get("x-go-name", key).lower() == go_name.lower()]
            if len(matches) != 1:
                sys.exit(f"{name}.{go_name}: no single property of Gitea's document matches this Go field")
            prop = ordered[matches[0]] = properties[matches[0]]
            prop["x-go-name"] = go_name
            if (name, go_name) in GO_TYPES:
                prop["x-go-type"] = GO_TYPES[(name, go_name)]
            if form_bindable(prop, definitions):
                prop["x-gatehouse-form"] = to_snake_case(go_name)
        if set(ordered) != set(properties):
            sys.exit(f"{name}: properties {sorted(set(properties) - set(ordered))} have no Go field in BODY_STRUCTS")
        schema["properties"] = ordered
    for name, fields in UNCHECKED_ENUMS.items():
        for field in fields:
            definitions[name]["properties"][field]["x-gatehouse-unchecked-enum"] = True
    for name, fields in UNCHECKED_REQUIRED.items():
        definitions[name]["required"] = [field for field in definitions[name]["required"] if field not in fields]


# Query parameters Gitea's handlers read themselves (ctx.FormString and friends), leniently or with their own
# messages: page and limit (a bad one is the default), sort and order (utils.ResolveSortOrder's `Invalid sort mode:
# "x"`), the RFC 3339 times (Go's time.Parse error), the hook list's
# type (anything unknown lists system hooks) and the notification subject types (unknown ones are dropped). The
# route leaves them unchecked (`x-gatehouse-handler-parsed`) and the handler parses them as Gitea does.
HANDLER_PARSED_QUERY = {"page", "limit", "sort", "order", "since", "before", "last_read_at"}
HANDLER_PARSED_OPERATION_QUERY = {
    "adminListHooks": {"type"},
    "adminUnadoptedList": {"query", "pattern"},
    "notifyGetList": {"subject-type"},
}


# Gitea's document names the unadopted list's filter `pattern`, but its handler reads `query`
# (ctx.FormString("query")); gitea-js sends `pattern`. Both are declared, and `query` wins when both are given.
UNADOPTED_FILTER = {
    "query": "Glob on owner/repository, as Gitea's handler reads it",
    "pattern": "The same glob, by the name Gitea's document gives it; used when query is empty",
}


def add_unadopted_query(operation):
    parameters = [parameter for parameter in operation["parameters"] if parameter["name"] not in UNADOPTED_FILTER]
    for name, text in UNADOPTED_FILTER.items():
        parameters.append({"type": "string", "name": name, "in": "query", "description": text})
    operation["parameters"] = parameters


def mark_handler_parsed(operation):
    parsed = HANDLER_PARSED_QUERY | HANDLER_PARSED_OPERATION_QUERY.get(operation["operationId"], set())
    for parameter in operation.get("parameters", []):
        if parameter["in"] == "query" and parameter["name"] in parsed:
            parameter["x-gatehouse-handler-parsed"] = True


def strip_text(node):
    """Drops every description (Gitea's prose) and Go package notes, keeping names and types."""
    if isinstance(node, dict):
        return {
            k: strip_text(v)
            for k, v in node.items()
            if not (k in ("description", "x-go-package", "title") and isinstance(v, str))
        }
    if isinstance(node, list):
        return [strip_text(v) for v in node]
    return node


def references(node):
    """Every definition or response name a node refers to."""
    found = set()
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            found.add(ref)
        for value in node.values():
            found |= references(value)
    elif isinstance(node, list):
        for value in node:
            found |= references(value)
    return found


def add_extra_operations(paths, definitions, responses, full):
    """Copies the extra operations, and every definition and response they need, from the full document."""
    for path, method in EXTRA_OPERATIONS:
        paths.setdefault(path, {})[method] = strip_text(full["paths"][path][method])
    pending = references([paths[path][method] for path, method in EXTRA_OPERATIONS])
    while pending:
        ref = pending.pop()
        kind, name = ref.split("/")[1:3]
        table, source = (definitions, full["definitions"]) if kind == "definitions" else (responses, full["responses"])
        if name not in table:
            table[name] = strip_text(source[name])
            pending |= references(table[name])


# What the build takes from Gitea's full document besides the operations: the package shapes of /admin/packages.
EXTRA_DEFINITIONS = ["Package", "PackageFile"]


def extract(full):
    """The parts of Gitea's full document that the build reads: the extra operations, the extra definitions, and
    every definition and response they refer to, as Gitea wrote them."""
    paths = {}
    for path, method in EXTRA_OPERATIONS:
        paths.setdefault(path, {})[method] = full["paths"][path][method]
    tables = {"definitions": {}, "responses": {}}
    pending = references(paths) | {f"#/definitions/{name}" for name in EXTRA_DEFINITIONS}
    while pending:
        kind, name = pending.pop().split("/")[1:3]
        if name not in tables[kind]:
            tables[kind][name] = full[kind][name]
            pending |= references(tables[kind][name])
    return {
        "swagger": full["swagger"],
        "info": full["info"],
        "paths": dict(sorted(paths.items())),
        "definitions": dict(sorted(tables["definitions"].items())),
        "responses": dict(sorted(tables["responses"].items())),
    }


def read_upstream():
    """The seed's operations (the subset) and the extract of the full document; `--extract-from FILE` first
    rewrites the extract from a full Gitea document (templates/swagger/v1_json.tmpl, rendered)."""
    extract_file = UPSTREAM / "gitea-swagger-extract.json"
    if len(sys.argv) == 3 and sys.argv[1] == "--extract-from":
        full = json.loads(pathlib.Path(sys.argv[2]).read_text())
        extract_file.write_text(json.dumps(extract(full), indent=2) + "\n")
    elif sys.argv[1:] not in ([], ["--check"]):
        sys.exit("usage: build-git-swagger.py [--check | --extract-from FULL_GITEA_SWAGGER_JSON]")
    subset = json.loads((UPSTREAM / "gitea-swagger-subset.json").read_text())
    return subset, json.loads(extract_file.read_text())


def main():
    subset, full = read_upstream()

    paths = strip_text(subset["paths"])
    definitions = strip_text(subset["definitions"])
    responses = strip_text(subset["responses"])
    add_extra_operations(paths, definitions, responses, full)
    for path_item in paths.values():
        for operation in path_item.values():
            operation["summary"] = SUMMARIES[operation["operationId"]]
            describe_responses(operation)
            operation["x-gatehouse-access"] = access(operation["operationId"], operation["tags"][0])
            if operation["operationId"] == "adminUnadoptedList":
                add_unadopted_query(operation)
            mark_handler_parsed(operation)
            for parameter in operation.get("parameters", []):
                if parameter["name"] in PARAMETER_TEXT:
                    parameter["description"] = PARAMETER_TEXT[parameter["name"]]

    paths["/admin/packages"] = {
        "get": {
            "produces": ["application/json"],
            "tags": ["admin"],
            "summary": SUMMARIES["adminListPackages"],
            "operationId": "adminListPackages",
            "parameters": [
                {"type": "integer", "name": "page", "in": "query", "description": PARAMETER_TEXT["page"]},
                {"type": "integer", "name": "limit", "in": "query", "description": PARAMETER_TEXT["limit"]},
                {"type": "string", "enum": PACKAGE_TYPES, "name": "type", "in": "query"},
                {"type": "string", "name": "q", "in": "query"},
            ],
            "responses": {"200": {"$ref": "#/responses/PackageList"}, "403": {"$ref": "#/responses/forbidden"}},
            "x-gatehouse-access": access("adminListPackages", "admin"),
        }
    }
    mark_handler_parsed(paths["/admin/packages"]["get"])

    for name in EXTRA_DEFINITIONS:
        definitions[name] = strip_text(full["definitions"][name])

    add_limits(paths, definitions)
    add_go_fields(definitions)
    check_path_access(paths)
    responses["PackageList"] = {"schema": {"type": "array", "items": {"$ref": "#/definitions/Package"}}}
    for name, response in responses.items():
        response["description"] = name

    security_definitions = strip_text(subset["securityDefinitions"])
    security_definitions["AuthorizationHeaderToken"]["description"] = "'token <value>' or 'Bearer <value>'"
    security_definitions["Token"]["description"] = "Deprecated: the token in the query"
    security_definitions["AccessToken"]["description"] = "Deprecated: the token in the query"
    security_definitions["SudoHeader"]["description"] = "Act as this user (administrators only)"
    security_definitions["SudoParam"]["description"] = "Act as this user (administrators only)"
    security_definitions["TOTPHeader"]["description"] = "One-time code, with basic authentication when two factors are on"

    document = {
        "swagger": "2.0",
        "info": {
            "title": "Gatehouse git hosting API",
            "description": "A Gitea-compatible API: administration, miscellaneous, notification and organization operations.",
            "license": {"name": "MIT", "url": "http://opensource.org/licenses/MIT"},
            "version": "29.0.0+dev-153-gba4f8fa246",
        },
        "basePath": "/api/v1",
        "schemes": ["https", "http"],
        "consumes": ["application/json"],
        "produces": ["application/json"],
        "securityDefinitions": security_definitions,
        "security": subset["security"],
        "paths": dict(sorted(paths.items())),
        "responses": dict(sorted(responses.items())),
        "definitions": dict(sorted(definitions.items())),
    }
    target = ROOT / "specs" / "git" / "swagger.v1.json"
    text = json.dumps(document, indent=2) + "\n"
    if sys.argv[1:] == ["--check"]:
        if target.read_text() != text:
            sys.exit(f"{target.relative_to(ROOT)} is not what this script makes: run it and commit the result")
        print(f"{target.relative_to(ROOT)} is up to date")
        return
    target.write_text(text)
    count = sum(1 for item in paths.values() for _ in item)
    print(f"wrote {target.relative_to(ROOT)} with {count} operations")


if __name__ == "__main__":
    main()
