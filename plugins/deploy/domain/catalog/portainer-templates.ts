/**
 * Portainer App Templates, read leniently: the v2 (`{"version":"2","templates":[...]}`) and v3 (integer `id`s) files, and
 * the legacy bare arrays (1.x string types "container"/"stack", 1.20 integer types). A broken entry is skipped with its
 * reason; only a file that is not JSON or not a template list at all is an error.
 * Facts: /work/shared/reference/catalog-formats.md, section 1.
 */
import { createHash } from 'node:crypto';

import { parseImageReference } from '../hub/image-reference.ts';

export type CatalogTemplateType = 'container' | 'swarm-stack' | 'compose-stack' | 'edge-stack';

/** An install-time input: becomes a container variable, or stack environment for `${VAR}` interpolation. */
export interface CatalogEnvInput {
    name: string;
    label?: string;
    default?: string;
}

export interface CatalogTemplate {
    /** `${sourceSlug}-${id or index}`: the template's own id (v3) or its position in the list. */
    id: string;
    title: string;
    description: string;
    /** Container templates only. */
    image: string | null;
    /** Stack templates only: the raw URL of the compose file (see composeFileUrl). */
    composeUrl: string | null;
    /** `"80/tcp"` (container port only) or `"8080:80/tcp"`. */
    ports: string[];
    env: CatalogEnvInput[];
    /** Compose short syntax: `"/data"` (a managed volume), `"/host:/data"`, `"/host:/data:ro"`. Host paths as the author wrote them. */
    volumes: string[];
    categories: string[];
    logo: string | null;
    type: CatalogTemplateType;
    source: string;
}

export interface SkippedTemplate {
    /** The entry's position in the file's template list. */
    index: number;
    reason: string;
}

export interface ParsedCatalog {
    templates: CatalogTemplate[];
    skipped: SkippedTemplate[];
}

export const MAX_CATALOG_BYTES = 5 * 1024 * 1024;
export const MAX_CATALOG_TEMPLATES = 5000;
const MAX_SLUG_LENGTH = 48;
const MAX_QUOTED_LENGTH = 60;

type Fields = Record<string, unknown>;

/** A problem that skips one template. Thrown inside the per-template readers and caught by the loop. */
class TemplateProblem extends Error {}

export function parsePortainerTemplates(text: string, source: string): ParsedCatalog {
    const entries = templateList(text, source);
    const slug = sourceSlug(source);
    const templates: CatalogTemplate[] = [];
    const skipped: SkippedTemplate[] = [];
    const indexById = new Map<string, number>();
    entries.slice(0, MAX_CATALOG_TEMPLATES).forEach((entry, index) => {
        try {
            const template = readTemplate(entry, index, slug, source);
            const firstIndex = indexById.get(template.id);
            if (firstIndex !== undefined) {
                throw new TemplateProblem(`duplicate id ${quote(template.id)} (already used by the template at index ${firstIndex})`);
            }

            indexById.set(template.id, index);
            templates.push(template);
        } catch (error) {
            if (!(error instanceof TemplateProblem)) {
                throw error;
            }

            skipped.push({ index, reason: error.message });
        }
    });
    if (entries.length > MAX_CATALOG_TEMPLATES) {
        const unread = entries.length - MAX_CATALOG_TEMPLATES;
        skipped.push({ index: MAX_CATALOG_TEMPLATES, reason: `${unread} more templates not read: at most ${MAX_CATALOG_TEMPLATES} are` });
    }

    return { templates, skipped };
}

/**
 * A short, stable, file-name-safe name for a source (a URL or a name): lowercase letters, digits and dashes.
 * A long one keeps its end (the most telling part of a URL) and a hash of the whole, so two sources do not collide.
 */
export function sourceSlug(source: string): string {
    const slug = slugify(source.replace(/^[a-z][a-z0-9+.-]*:\/\//i, ''));
    const hash = createHash('sha256').update(source).digest('hex').slice(0, 8);
    if (slug === '') {
        return `source-${hash}`;
    }

    if (slug.length <= MAX_SLUG_LENGTH) {
        return slug;
    }

    return `${slug.slice(-(MAX_SLUG_LENGTH - hash.length - 1)).replace(/^-+/, '')}-${hash}`;
}

function slugify(text: string): string {
    return text
        .toLowerCase()
        .replace(/[^a-z0-9]+/g, '-')
        .replace(/^-+|-+$/g, '');
}

function templateList(text: string, source: string): unknown[] {
    const fail = (problem: string) => new Error(`Portainer templates from ${source}: ${problem}`);
    // Checked on the length first: a string of more UTF-16 units than the limit has at least as many bytes.
    if (text.length > MAX_CATALOG_BYTES || Buffer.byteLength(text, 'utf8') > MAX_CATALOG_BYTES) {
        throw fail(`the file is larger than ${MAX_CATALOG_BYTES / 1024 / 1024} MB`);
    }

    let root: unknown;
    try {
        root = JSON.parse(text.replace(/^\uFEFF/, ''));
    } catch (error) {
        throw fail(`not valid JSON (${error instanceof Error ? error.message : String(error)})`);
    }

    if (Array.isArray(root)) {
        return root;
    }

    if (!isObject(root)) {
        throw fail(`the file holds ${describe(root)}, not a template list (an array, or an object with "version" and "templates")`);
    }

    const fields = caseInsensitive(root);
    if (!Array.isArray(fields.templates)) {
        throw fail('the root object has no "templates" array');
    }

    if (fields.version !== undefined && !/^[23](\.0)?$/.test(String(fields.version))) {
        throw fail(`unsupported version ${quote(String(fields.version))} (versions 2 and 3 are read)`);
    }

    return fields.templates;
}

function readTemplate(entry: unknown, index: number, slug: string, source: string): CatalogTemplate {
    if (!isObject(entry)) {
        throw new TemplateProblem(`not an object but ${describe(entry)}`);
    }

    const fields = caseInsensitive(entry);
    const title = trimmedString(fields.title);
    if (title === undefined) {
        throw new TemplateProblem('no title');
    }

    const type = templateType(fields);
    return {
        id: `${slug}-${ownId(fields.id) ?? index}`,
        title,
        description: trimmedString(fields.description) ?? '',
        image: type === 'container' ? containerImage(fields) : null,
        composeUrl: type === 'container' ? null : stackFileUrl(fields, type),
        ports: type === 'container' ? ports(fields.ports) : [],
        env: envInputs(fields.env),
        volumes: type === 'container' ? volumes(fields.volumes) : [],
        categories: unique(strings(fields.categories)),
        logo: httpUrl(fields.logo)?.href ?? null,
        type,
        source,
    };
}

function ownId(value: unknown): string | undefined {
    if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) {
        return String(value);
    }

    const slug = typeof value === 'string' ? slugify(value).slice(0, MAX_SLUG_LENGTH) : '';
    return slug === '' ? undefined : slug;
}

const TYPE_BY_NUMBER = new Map<number, CatalogTemplateType>([
    [1, 'container'],
    [2, 'swarm-stack'],
    [3, 'compose-stack'],
    [4, 'edge-stack'],
]);
// Legacy 1.x: stacks were Swarm stacks (their files are docker-stack.yml).
const TYPE_BY_NAME = new Map<string, CatalogTemplateType>([
    ['container', 'container'],
    ['stack', 'swarm-stack'],
]);

function templateType(fields: Fields): CatalogTemplateType {
    const value = fields.type;
    if (value === undefined || value === null) {
        return typeFromContent(fields);
    }

    const text = typeof value === 'number' || typeof value === 'string' ? String(value).trim().toLowerCase() : '';
    const type = /^\d+$/.test(text) ? TYPE_BY_NUMBER.get(Number(text)) : TYPE_BY_NAME.get(text);
    if (type === undefined) {
        throw new TemplateProblem(`unknown type ${literal(value)}`);
    }

    return type;
}

/** Without a type, what the entry holds decides: an image is a container; a stack file is read as a Compose stack. */
function typeFromContent(fields: Fields): CatalogTemplateType {
    if (trimmedString(fields.image) !== undefined) {
        return 'container';
    }

    if (fields.repository !== undefined || fields.stackfile !== undefined) {
        return 'compose-stack';
    }

    throw new TemplateProblem('no type, and neither an image nor a stack file');
}

function containerImage(fields: Fields): string {
    const image = trimmedString(fields.image);
    if (image === undefined) {
        throw new TemplateProblem('container template without an image');
    }

    // Portainer pulls `registry/image` when a registry is named (e.g. "quay.io").
    const registry = trimmedString(fields.registry)?.replace(/\/+$/, '');
    const reference = registry === undefined || registry === '' || image.startsWith(`${registry}/`) ? image : `${registry}/${image}`;
    // The reference goes into the app's compose file: only one Docker would read, tag included.
    try {
        parseImageReference(reference);
    } catch (error) {
        throw new TemplateProblem(`image ${quote(reference)} is not an image reference: ${(error as Error).message}`);
    }

    return reference;
}

/** The compose file of a stack: a direct URL (Edge templates), or a file in a git repository. */
function stackFileUrl(fields: Fields, type: CatalogTemplateType): string {
    const directUrl = trimmedString(fields.stackfile);
    if (type === 'edge-stack' && directUrl !== undefined) {
        return directHttpUrl(directUrl);
    }

    if (isObject(fields.repository)) {
        const repository = caseInsensitive(fields.repository);
        const url = trimmedString(repository.url);
        const path = trimmedString(repository.stackfile);
        if (url !== undefined && path !== undefined) {
            return repositoryFileUrl(url, path);
        }
    }

    if (directUrl !== undefined) {
        return directHttpUrl(directUrl);
    }

    throw new TemplateProblem('stack template without a stack file (repository.url and repository.stackfile, or a stackfile URL)');
}

function directHttpUrl(text: string): string {
    const url = httpUrl(text);
    if (url === undefined) {
        throw new TemplateProblem(`stack file URL ${quote(text)} is not an http(s) URL`);
    }

    return url.href;
}

/**
 * Where a repository's file can be fetched. Templates name no branch, and Portainer clones the default one, so GitHub
 * and GitLab get their raw-file URL at `HEAD` (the default branch); any other host gets the repository URL joined with
 * the path, for the fetcher to resolve.
 */
function repositoryFileUrl(repositoryText: string, pathText: string): string {
    const repository = httpUrl(repositoryText);
    if (repository === undefined) {
        throw new TemplateProblem(`repository URL ${quote(repositoryText)} is not an http(s) URL`);
    }

    const segments = pathText
        .replace(/\\/g, '/')
        .split('/')
        .filter((segment) => segment !== '' && segment !== '.');
    if (segments.length === 0 || segments.includes('..')) {
        throw new TemplateProblem(`stack file path ${quote(pathText)} is not a path inside the repository`);
    }

    const filePath = segments.map(encodeURIComponent).join('/');
    const projectPath = repository.pathname.replace(/\/+$/, '').replace(/\.git$/, '');
    const host = repository.hostname.toLowerCase();
    if ((host === 'github.com' || host === 'www.github.com') && /^\/[^/]+\/[^/]+$/.test(projectPath)) {
        return `https://raw.githubusercontent.com${projectPath}/HEAD/${filePath}`;
    }

    if (host === 'gitlab.com') {
        return `${repository.origin}${projectPath}/-/raw/HEAD/${filePath}`;
    }

    return `${repository.origin}${projectPath}/${filePath}`;
}

// Host part optional (an IPv4 or bracketed IPv6 address, then the published port), then the container port, ranges allowed.
const PORT = /^(?:(?:\d{1,3}(?:\.\d{1,3}){3}|\[[0-9a-f:]+\]):)?(?:\d{1,5}(?:-\d{1,5})?:)?\d{1,5}(?:-\d{1,5})?(?:\/(?:tcp|udp|sctp))?$/i;

/** Port strings; an empty host part (`":80/tcp"`, common in third-party lists) means none. Objects and other shapes are dropped. */
function ports(value: unknown): string[] {
    return unique(strings(value).map((port) => port.replace(/^:/, '').toLowerCase())).filter((port) => PORT.test(port));
}

function volumes(value: unknown): string[] {
    const specs = arrayOf(value).map(volumeSpec);
    return unique(specs.filter((spec): spec is string => spec !== undefined));
}

/** Legacy files give a container path as a string; later ones `{container, bind?, readonly?}`. */
function volumeSpec(value: unknown): string | undefined {
    if (typeof value === 'string') {
        return trimmedString(value);
    }

    if (!isObject(value)) {
        return undefined;
    }

    const fields = caseInsensitive(value);
    const container = trimmedString(fields.container);
    const bind = trimmedString(fields.bind);
    if (container === undefined) {
        return undefined;
    }

    // Without a bind, ":ro" would make compose read the container path as the source, so read-only needs a bind.
    if (bind === undefined) {
        return container;
    }

    return fields.readonly === true ? `${bind}:${container}:ro` : `${bind}:${container}`;
}

function envInputs(value: unknown): CatalogEnvInput[] {
    const inputs: CatalogEnvInput[] = [];
    const names = new Set<string>();
    for (const entry of arrayOf(value)) {
        const input = envInput(entry);
        if (input !== undefined && !names.has(input.name)) {
            names.add(input.name);
            inputs.push(input);
        }
    }

    return inputs;
}

function envInput(value: unknown): CatalogEnvInput | undefined {
    if (!isObject(value)) {
        return undefined;
    }

    const fields = caseInsensitive(value);
    const name = trimmedString(fields.name);
    if (name === undefined || !/^[^\s=]+$/.test(name)) {
        return undefined;
    }

    const input: CatalogEnvInput = { name };
    const label = trimmedString(fields.label);
    if (label !== undefined) {
        input.label = label;
    }

    // `set` is the legacy preset value; a `select` dropdown's default is its option marked `default: true`.
    const defaultValue = scalarString(fields.default) ?? scalarString(fields.set) ?? selectDefault(fields.select);
    if (defaultValue !== undefined) {
        input.default = defaultValue;
    }

    return input;
}

function selectDefault(value: unknown): string | undefined {
    for (const option of arrayOf(value)) {
        const fields = isObject(option) ? caseInsensitive(option) : {};
        if (fields.default === true) {
            return scalarString(fields.value);
        }
    }

    return undefined;
}

function httpUrl(value: unknown): URL | undefined {
    const text = trimmedString(value);
    if (text === undefined || !URL.canParse(text)) {
        return undefined;
    }

    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
}

/**
 * The object's fields under lowercase keys, as Go's JSON decoding matches them (so `stackFile` and `Id` are read);
 * a key already in lowercase wins over another spelling.
 */
function caseInsensitive(object: Fields): Fields {
    const fields: Fields = {};
    for (const [key, value] of Object.entries(object)) {
        const lower = key.toLowerCase();
        if (!Object.hasOwn(fields, lower) || key === lower) {
            fields[lower] = value;
        }
    }

    return fields;
}

function isObject(value: unknown): value is Fields {
    return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function arrayOf(value: unknown): unknown[] {
    return Array.isArray(value) ? value : [];
}

function strings(value: unknown): string[] {
    return arrayOf(value)
        .map(trimmedString)
        .filter((text): text is string => text !== undefined);
}

function trimmedString(value: unknown): string | undefined {
    const text = typeof value === 'string' ? value.trim() : '';
    return text === '' ? undefined : text;
}

function scalarString(value: unknown): string | undefined {
    return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? String(value) : undefined;
}

function unique(values: string[]): string[] {
    return [...new Set(values)];
}

function quote(text: string): string {
    return JSON.stringify(text.length > MAX_QUOTED_LENGTH ? `${text.slice(0, MAX_QUOTED_LENGTH)}…` : text);
}

/** A value as it would appear in the file, for a scalar; its kind otherwise. */
function literal(value: unknown): string {
    if (typeof value === 'string') {
        return quote(value);
    }

    return typeof value === 'number' || typeof value === 'boolean' ? String(value) : describe(value);
}

function describe(value: unknown): string {
    if (value === null) {
        return 'null';
    }

    if (Array.isArray(value)) {
        return 'an array';
    }

    if (typeof value === 'object') {
        return 'an object';
    }

    return typeof value === 'string' ? `the string ${quote(value)}` : `${typeof value} ${String(value)}`;
}
