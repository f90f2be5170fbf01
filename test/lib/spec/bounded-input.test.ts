/**
 * Every string a git API body stores is bounded: Gitea's binding limit where it has one, otherwise what the column
 * holds. A value past its bound is a 422 `[Field]: MaxSize` that writes nothing, on SQLite as on MariaDB (where the
 * insert would otherwise fail with a 500); a value at its bound is stored.
 */
import Crypto from 'node:crypto';

import Code from '@hapi/code';
import type { Server, ServerInjectResponse } from '@hapi/hapi';
import * as Lab from '@hapi/lab';
import sshpk from 'sshpk';

import { type GitOperation, gitOperations, readSwagger } from '../../../lib/spec/git-loader.ts';
import type { JsonSchema } from '../../../lib/spec/schema-to-joi.ts';
import { badges } from '../../../plugins/git/domain/identity/badge-service.ts';
import { GIT_SWAGGER_FILE } from '../../../server.ts';
import { createTestServer, createTestUser, ON_MYSQL, type TestServer, type TestUser } from '../../helpers/server.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const document = readSwagger(GIT_SWAGGER_FILE);

/** Strings a body carries that are never stored as they are, each with what bounds it instead. */
const NOT_STORED: Record<string, string> = {
    'CreateRepoOption.gitignores': 'template names, looked up',
    'CreateRepoOption.license': 'a template name, looked up',
    'CreateRepoOption.readme': 'a template name, looked up',
    'CreateRepoOption.issue_labels': 'a template name, looked up',
    'CreateIssueOption.assignee': 'a user name, looked up',
    'CreateIssueOption.assignees[]': 'user names, looked up',
    'EditIssueOption.assignee': 'a user name, looked up',
    'EditIssueOption.assignees[]': 'user names, looked up',
    'EditIssueOption.state': 'open or closed',
    'CreateHookOption.events[]': "Gitea's event names only are kept",
    'EditHookOption.events[]': "Gitea's event names only are kept",
    'CreateOrUpdateSecretOption.data': "Gitea's 65,536 bytes, answered 400 `data too long`",
    'CreateOrUpdateSecretOption.description': 'cut to 4,096 characters, as Gitea does',
    'MarkdownOption.Text': 'rendered, never stored',
    'MarkdownOption.Context': 'rendered, never stored',
    'MarkdownOption.Mode': 'rendered, never stored',
    'MarkupOption.Text': 'rendered, never stored',
    'MarkupOption.Context': 'rendered, never stored',
    'MarkupOption.Mode': 'rendered, never stored',
    'MarkupOption.FilePath': 'rendered, never stored',
};

interface StringField {
    /** `Definition.path.to.field`, `[]` marking a list's items. */
    key: string;
    path: string[];
    schema: JsonSchema & { 'x-gatehouse-max-bytes'?: number; maxItems?: number };
    label: string;
}

function resolve(schema: JsonSchema): JsonSchema {
    return schema.$ref ? (document.definitions[schema.$ref.replace('#/definitions/', '')] as JsonSchema) : schema;
}

/** The string fields (and lists of strings) of a body schema, nested objects included. */
function stringFields(schema: JsonSchema, owner: string, path: string[] = []): StringField[] {
    const fields: StringField[] = [];
    for (const [name, property] of Object.entries(resolve(schema).properties ?? {})) {
        const resolved = resolve(property);
        const label = property['x-go-name'] ?? name;
        if (resolved.type === 'string' && !resolved.enum && resolved.format !== 'date-time') {
            fields.push({ key: [owner, ...path, name].join('.'), path: [...path, name], schema: resolved, label });
        } else if (resolved.type === 'array' && resolve(resolved.items ?? {}).type === 'string') {
            fields.push({ key: `${[owner, ...path, name].join('.')}[]`, path: [...path, name], schema: resolved, label });
        } else if (resolved.type === 'object' || resolved.properties) {
            fields.push(...stringFields(resolved, owner, [...path, name]));
        }
    }

    return fields;
}

function bodyDefinition(operation: GitOperation): string | undefined {
    const body = operation.parameters?.find((parameter) => parameter.in === 'body');
    return body?.schema?.$ref?.replace('#/definitions/', '');
}

const operations = gitOperations(document).filter((operation) => bodyDefinition(operation) !== undefined);

function fieldsOf(operation: GitOperation): StringField[] {
    const definition = bodyDefinition(operation) as string;
    return stringFields({ $ref: `#/definitions/${definition}` }, definition);
}

function withField(body: Record<string, unknown>, path: string[], value: unknown): Record<string, unknown> {
    const [head, ...rest] = path as [string, ...string[]];
    if (rest.length === 0) {
        return { ...body, [head]: value };
    }

    return { ...body, [head]: withField((body[head] as Record<string, unknown> | undefined) ?? {}, rest, value) };
}

let counter = 0;

/** A name no other request of this test has used, padded to `length` when asked. */
function unique(prefix: string, length = 0): string {
    counter += 1;
    const name = `${prefix}${counter}x${Crypto.randomBytes(3).toString('hex')}`;
    return name.padEnd(length, 'a');
}

function publicKeyLine(): string {
    const pem = Crypto.generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' });
    return sshpk.parseKey(pem, 'pem').toString('ssh');
}

/** Text of exactly `bytes` UTF-8 bytes, in two-byte characters as far as it goes. */
function textOfBytes(bytes: number): string {
    return 'é'.repeat(Math.floor(bytes / 2)) + (bytes % 2 === 1 ? 'x' : '');
}

/** Fields that must be valid user, organisation or repository names. */
const NAMES = ['CreateUserOption.username', 'CreateOrgOption.username', 'RenameUserOption.new_username', 'CreateRepoOption.name'];

/** A value at a field's bound that the service accepts; undefined when no free text fits the field. */
function atLimit(field: StringField, limit: number): unknown {
    const name = field.path.at(-1) ?? '';
    if (field.key.endsWith('.content_type')) {
        return undefined;
    }

    if (NAMES.includes(field.key)) {
        return unique('n', limit);
    }

    if (name === 'email') {
        const domain = '@example.com';
        return `${unique('e', Math.min(limit, 254) - domain.length)}${domain}`;
    }

    if (name === 'website' || name === 'url') {
        const prefix = 'https://example.com/';
        return `${prefix}${'a'.repeat(limit - prefix.length)}`;
    }

    if (name === 'default_branch') {
        return 'b'.repeat(limit);
    }

    if (name === 'key') {
        const line = publicKeyLine();
        return `${line} ${'c'.repeat(limit - line.length - 1)}`;
    }

    // Characters of two UTF-8 bytes: a column bounded in characters must hold this many of them.
    return field.schema['x-gatehouse-max-bytes'] === undefined ? 'é'.repeat(limit) : textOfBytes(limit);
}

/** Past the bound by one: a character more, or for byte bounds a byte more in fewer characters than the bound. */
function pastLimit(field: StringField): string {
    const bytes = field.schema['x-gatehouse-max-bytes'];
    return bytes === undefined ? 'x'.repeat((field.schema.maxLength as number) + 1) : textOfBytes(bytes + 1);
}

describe('bounded input: every stored string of the git API has a bound', { timeout: 600_000 }, () => {
    let context: TestServer;
    let server: Server;
    let admin: TestUser;
    let hookId: number;

    /** Where each body operation is sent, and a body it accepts. */
    let targets: Record<string, { url: () => Promise<string>; body: () => Record<string, unknown> }>;

    before(async () => {
        context = await createTestServer();
        server = context.server;
        admin = await createTestUser(server, { name: 'boundadmin', admin: true });
        await createTestUser(server, { name: 'boundedited' });
        const inject = async (method: string, url: string, payload: object) => {
            const response = await server.inject({ method, url: `/api/v1${url}`, headers: admin.headers, payload });
            expect(response.statusCode, `${method} ${url}: ${response.payload}`).to.equal(201);
            return response.result as { id: number };
        };

        await inject('POST', '/orgs', { username: 'boundorg' });
        await inject('POST', '/admin/users/boundadmin/repos', { name: 'boundrepo' });
        await inject('POST', '/repos/boundadmin/boundrepo/issues', { title: 'first' });
        hookId = (
            await inject('POST', '/admin/hooks', { type: 'gitea', config: { url: 'https://example.com/hook', content_type: 'json' } })
        ).id;
        const fixed = (url: string) => () => Promise.resolve(url);
        targets = {
            adminCreateUser: {
                url: fixed('/admin/users'),
                body: () => ({
                    username: unique('u'),
                    email: `${unique('e')}@example.com`,
                    password: 'correct-horse',
                    must_change_password: false,
                }),
            },
            adminEditUser: { url: fixed('/admin/users/boundedited'), body: () => ({ source_id: 0, login_name: 'boundedited' }) },
            adminRenameUser: {
                url: async () => `/admin/users/${(await createTestUser(server)).user.name}/rename`,
                body: () => ({ new_username: unique('r') }),
            },
            adminCreateOrg: { url: fixed('/admin/users/boundadmin/orgs'), body: () => ({ username: unique('o') }) },
            orgCreate: { url: fixed('/orgs'), body: () => ({ username: unique('o') }) },
            orgEdit: { url: fixed('/orgs/boundorg'), body: () => ({}) },
            adminCreateRepo: { url: fixed('/admin/users/boundadmin/repos'), body: () => ({ name: unique('r') }) },
            createOrgRepoDeprecated: { url: fixed('/org/boundorg/repos'), body: () => ({ name: unique('r') }) },
            adminCreatePublicKey: {
                url: fixed('/admin/users/boundadmin/keys'),
                body: () => ({ title: unique('k'), key: publicKeyLine() }),
            },
            adminCreateHook: {
                url: fixed('/admin/hooks'),
                body: () => ({ type: 'gitea', config: { url: 'https://example.com/hook', content_type: 'json' } }),
            },
            adminEditHook: { url: () => Promise.resolve(`/admin/hooks/${hookId}`), body: () => ({}) },
            updateOrgSecret: { url: async () => `/orgs/boundorg/actions/secrets/${unique('S')}`, body: () => ({ data: 'value' }) },
            issueCreateIssue: { url: fixed('/repos/boundadmin/boundrepo/issues'), body: () => ({ title: 'an issue' }) },
            issueEditIssue: { url: fixed('/repos/boundadmin/boundrepo/issues/1'), body: () => ({}) },
            issueCreateComment: { url: fixed('/repos/boundadmin/boundrepo/issues/1/comments'), body: () => ({ body: 'a comment' }) },
            adminAddUserBadges: { url: fixed('/admin/users/boundedited/badges'), body: () => ({ badge_slugs: ['bounded'] }) },
            adminDeleteUserBadges: { url: fixed('/admin/users/boundedited/badges'), body: () => ({ badge_slugs: ['bounded'] }) },
        };
        await badges(server).define({ slug: 'bounded' });
    });

    after(async () => {
        await context?.cleanup();
    });

    const urlOf = async (operation: GitOperation): Promise<string> => `/api/v1${await targets[operation.operationId]?.url()}`;

    const send = async (operation: GitOperation, body: unknown, url?: string): Promise<ServerInjectResponse> =>
        await server.inject({
            method: operation.method,
            url: url ?? (await urlOf(operation)),
            headers: admin.headers,
            payload: body as object,
        });

    /** Rows per table of ours, to show that a refused request wrote nothing. */
    const rowCounts = async (): Promise<Record<string, number>> => {
        const { knex } = server.app;
        const tables: string[] = ON_MYSQL
            ? ((await knex.raw('SHOW TABLES'))[0] as Array<Record<string, string>>).map((row) => Object.values(row)[0] ?? '')
            : ((await knex.raw("SELECT name FROM sqlite_master WHERE type = 'table'")) as Array<{ name: string }>).map((row) => row.name);
        const counts: Record<string, number> = {};
        for (const table of tables.filter((name) => !name.startsWith('sqlite_'))) {
            const row = (await knex(table).count({ count: '*' }).first()) as { count: number | string } | undefined;
            counts[table] = Number(row?.count ?? 0);
        }

        return counts;
    };

    const stored = (operation: GitOperation) => fieldsOf(operation).filter((field) => !(field.key in NOT_STORED));

    it('declares a bound for every string a body stores', () => {
        const unbounded: string[] = [];
        for (const operation of operations) {
            for (const field of stored(operation)) {
                const items = field.schema.items ? resolve(field.schema.items) : undefined;
                const bounded = items
                    ? field.schema.maxItems !== undefined && items.maxLength !== undefined
                    : field.schema.maxLength !== undefined || field.schema['x-gatehouse-max-bytes'] !== undefined;
                if (!bounded) {
                    unbounded.push(`${operation.operationId}: ${field.key}`);
                }
            }
        }

        expect(unbounded).to.equal([]);
    });

    it('refuses a string one past its bound with 422 [Field]: MaxSize, writing nothing', async () => {
        const findings: string[] = [];
        let sent = 0;
        for (const operation of operations.filter((candidate) => targets[candidate.operationId])) {
            for (const field of stored(operation).filter((candidate) => !candidate.schema.items)) {
                const url = await urlOf(operation);
                const before = await rowCounts();
                const response = await send(
                    operation,
                    withField(targets[operation.operationId]?.body() ?? {}, field.path, pastLimit(field)),
                    url,
                );
                const after = await rowCounts();
                const message = (JSON.parse(response.payload) as { message?: string }).message;
                if (response.statusCode !== 422 || message !== `[${field.label}]: MaxSize`) {
                    findings.push(`${operation.operationId} ${field.key}: ${response.statusCode} ${response.payload.slice(0, 120)}`);
                }

                const changed = Object.keys(after).filter((table) => after[table] !== before[table]);
                if (changed.length > 0) {
                    findings.push(`${operation.operationId} ${field.key}: refused, yet rows changed in ${changed.join(', ')}`);
                }

                sent += 1;
            }
        }

        expect(sent).to.be.above(40);
        expect(findings).to.equal([]);
    });

    it('stores a string at its bound, in characters of two bytes where the bound counts characters', async () => {
        const findings: string[] = [];
        let sent = 0;
        for (const operation of operations.filter((candidate) => targets[candidate.operationId])) {
            for (const field of stored(operation).filter((candidate) => !candidate.schema.items)) {
                const limit = field.schema['x-gatehouse-max-bytes'] ?? (field.schema.maxLength as number);
                const value = atLimit(field, limit);
                if (value === undefined) {
                    continue;
                }

                const response = await send(operation, withField(targets[operation.operationId]?.body() ?? {}, field.path, value));
                if (response.statusCode >= 300) {
                    findings.push(`${operation.operationId} ${field.key}: ${response.statusCode} ${response.payload.slice(0, 200)}`);
                }

                sent += 1;
            }
        }

        expect(sent).to.be.above(30);
        expect(findings).to.equal([]);
    });

    it('answers strings that are never stored, however long, without a 5xx', async () => {
        const findings: string[] = [];
        for (const operation of operations.filter((candidate) => targets[candidate.operationId])) {
            for (const field of fieldsOf(operation).filter((candidate) => candidate.key in NOT_STORED)) {
                const long = 'x'.repeat(70_000);
                const value = field.schema.items ? [long] : long;
                const response = await send(operation, withField(targets[operation.operationId]?.body() ?? {}, field.path, value));
                if (response.statusCode >= 500) {
                    findings.push(`${operation.operationId} ${field.key}: ${response.statusCode} ${response.payload.slice(0, 120)}`);
                }
            }
        }

        expect(findings).to.equal([]);
    });

    it('bounds the number of badge slugs in one request, and each slug, with 422', async () => {
        const many = Array.from({ length: 100_000 }, (_, index) => `slug-${index}`);
        for (const method of ['POST', 'DELETE']) {
            for (const badge_slugs of [many, ['x'.repeat(192)]]) {
                const response = await server.inject({
                    method,
                    url: '/api/v1/admin/users/boundedited/badges',
                    headers: admin.headers,
                    payload: { badge_slugs },
                });
                expect(response.statusCode, method).to.equal(422);
                expect(JSON.parse(response.payload).message).to.equal('[BadgeSlugs]: MaxSize');
            }
        }
    });

    it('bounds a secret name by its column (422), and stores a value of the 65,536 bytes Gitea allows', async () => {
        const put = async (name: string, data: string) =>
            await server.inject({
                method: 'PUT',
                url: `/api/v1/orgs/boundorg/actions/secrets/${name}`,
                headers: admin.headers,
                payload: { data },
            });
        const long = await put('S'.repeat(192), 'value');
        expect(long.statusCode).to.equal(422);
        expect(JSON.parse(long.payload).message).to.equal('[secretname]: MaxSize');
        expect((await put('S'.repeat(191), 'value')).statusCode).to.equal(201);
        expect((await put('BIG', textOfBytes(65_536))).statusCode).to.equal(201);
        const tooBig = await put('BIGGER', textOfBytes(65_537));
        expect(tooBig.statusCode).to.equal(400);
        expect(JSON.parse(tooBig.payload).message).to.equal('data too long');
    });
});
