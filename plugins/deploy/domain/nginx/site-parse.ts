/**
 * Reads nginx site text back into the model. The text itself is never rewritten: the model is what
 * could be understood, and whatever the proxying server holds beyond it lands in `extra`, verbatim.
 */
import { ValidationError } from '../../../../lib/errors.ts';
import { assertHostAccess, type SitePlaces } from './site-access.ts';
import { forwardedVariable, PROXY_HEADERS, PROXY_REDIRECTS, WEBSOCKET_HEADERS } from './site-render.ts';
import { forwardAuthKinds } from '../../../idp/forward-auth.ts';
import {
    ACME_PATH,
    type ForwardAuthSpec,
    forwardAuthContract,
    identityHeaders,
    type LocationSpec,
    modelKind,
    type SiteSpec,
} from './site-types.ts';
import {
    checkHeaderName,
    checkHeaderValue,
    checkLocationPath,
    checkProxyPass,
    EXTRA_BEGIN,
    EXTRA_END,
    type ValueCheck,
} from './site-values.ts';
import { argumentValues, type ConfComment, type ConfDirective, ConfSyntaxError, directivesNamed, readConf } from './syntax.ts';

const passes = (check: ValueCheck, value: unknown): boolean => check(value) === undefined;

function first(directives: ConfDirective[], name: string): ConfDirective | undefined {
    return directives.find((directive) => directive.name === name);
}

function body(directive: ConfDirective): ConfDirective[] {
    return directive.block ?? [];
}

function isSslServer(server: ConfDirective): boolean {
    const listens = directivesNamed(body(server), 'listen');
    return listens.some((listen) => argumentValues(listen).includes('ssl')) || first(body(server), 'ssl_certificate') !== undefined;
}

function listenPort(server: ConfDirective): number | undefined {
    const address = first(body(server), 'listen')?.args[0]?.value ?? '';
    const match = /(?:^|:)([0-9]{1,5})$/.exec(address);
    return match ? Number(match[1]) : undefined;
}

/** The address of a site that listens on one address only (`listen 127.0.0.1:8080`), else undefined. */
function listenAddress(server: ConfDirective): string | undefined {
    const addresses = directivesNamed(body(server), 'listen').map((listen) => listen.args[0]?.value ?? '');
    const hosts = new Set(
        addresses.map((address) => /^(?:\[([^\]]+)\]|([^:[\]]+)):[0-9]{1,5}$/.exec(address)).map((match) => match?.[1] ?? match?.[2]),
    );
    const [host] = hosts;
    return hosts.size === 1 && host !== undefined && host !== '::' && host !== '*' && host !== '0.0.0.0' ? host : undefined;
}

function locationWithPath(server: ConfDirective | undefined, path: string): ConfDirective | undefined {
    return directivesNamed(server ? body(server) : [], 'location').find((location) => argumentValues(location).includes(path));
}

function singleArgument(directives: ConfDirective[], name: string): string | undefined {
    return first(directives, name)?.args[0]?.value;
}

/** A location of the proxying server, read as the model's location when every directive in it is one the model writes. */
class LocationReader {
    readonly headers: Record<string, string> = {};
    readonly forwarded: string[] = [];
    readonly identityHeaders: Record<string, string> = {};
    readonly #authVariables = new Map<string, string>();
    proxyPass: string | undefined;
    websocket = false;
    auth = false;

    constructor(private readonly serverHeaders: Record<string, string>) {}

    read(location: ConfDirective): LocationSpec | undefined {
        const values = argumentValues(location);
        const exact = values.length === 2 && values[0] === '=';
        const path = values.length === 1 || exact ? values[values.length - 1] : undefined;
        if (!passes(checkLocationPath, path) || !body(location).every((directive) => this.#accept(directive))) {
            return undefined;
        }

        if (this.proxyPass === undefined || path === undefined) {
            return undefined;
        }

        return {
            path,
            ...(exact ? { exact: true } : {}),
            proxyPass: this.proxyPass,
            ...(this.websocket ? { websocket: true } : {}),
            ...(Object.keys(this.headers).length > 0 ? { headers: this.headers } : {}),
            ...(this.auth ? { auth: true } : {}),
        };
    }

    #accept(directive: ConfDirective): boolean {
        const args = argumentValues(directive);
        switch (directive.name) {
            case 'proxy_pass':
                this.proxyPass = args[0];
                return args.length === 1 && passes(checkProxyPass, args[0]);
            case 'proxy_http_version':
                return args.join(' ') === '1.1';
            case 'proxy_redirect':
                return PROXY_REDIRECTS.some((redirect) => redirect.join(' ') === args.join(' '));
            case 'proxy_set_header':
                return args.length === 2 && this.#requestHeader(args[0] ?? '', args[1] ?? '');
            case 'auth_request':
                this.auth = forwardAuthKinds().some(({ contract }) => args.join(' ') === contract.authPath);
                return this.auth;
            case 'error_page':
                return forwardAuthKinds().some(({ contract }) => args.join(' ') === `401 = ${contract.signInLocation}`);
            case 'auth_request_set':
                this.#authVariables.set(args[0] ?? '', args[1] ?? '');
                return args.length === 2;
            case 'add_header':
                return this.#responseHeader(args);
            default:
                // Another directive a kind's check writes into each protected location.
                return forwardAuthKinds().some(({ contract }) =>
                    contract
                        .nginx('', contract.signInPath)
                        .check.map(directiveOf)
                        .some((line) => line.join(' ') === [directive.name, ...args].join(' ')),
                );
        }
    }

    #requestHeader(name: string, value: string): boolean {
        if (PROXY_HEADERS.some(([known, knownValue]) => known === name && knownValue === value)) {
            return true;
        }

        if (WEBSOCKET_HEADERS.some(([known]) => known === name) || (name === 'Connection' && value === '$connection_upgrade')) {
            this.websocket = true;
            return true;
        }

        if (value === '' && identityHeaders().some((header) => header.toLowerCase() === name.toLowerCase())) {
            return true;
        }

        const upstream = this.#authVariables.get(value);
        if (upstream !== undefined && upstream === forwardedVariable(name).upstream) {
            this.forwarded.push(name);
            return true;
        }

        const answer = upstream === undefined ? undefined : outpostHeaderOf(upstream);
        if (answer !== undefined) {
            this.identityHeaders[name] = answer;
            return passes(checkHeaderName, name);
        }

        this.headers[name] = value;
        return passes(checkHeaderName, name) && passes(checkHeaderValue, value);
    }

    #responseHeader(args: string[]): boolean {
        const [name = '', value = ''] = args;
        if (name === 'Set-Cookie' && value === '$auth_cookie') {
            return true;
        }

        return this.serverHeaders[name] === value && (args.length === 2 || (args.length === 3 && args[2] === 'always'));
    }
}

/** What the proxying server holds besides the model's parts: the marked extra section and directives not understood. */
class ExtraCollector {
    readonly #parts: Array<{ at: number; text: string }> = [];
    #marked: { start: number; end: number } | undefined;

    constructor(private readonly source: string) {}

    markedSection(server: ConfDirective, comments: ConfComment[]): void {
        const inside = comments.filter((comment) => comment.start > server.start && comment.end < server.end);
        const begin = inside.find((comment) => comment.text === EXTRA_BEGIN);
        const end = inside.find((comment) => comment.text === EXTRA_END && begin !== undefined && comment.start > begin.end);
        if (!begin || !end) {
            return;
        }

        const start = begin.end + 1;
        const stop = this.source.lastIndexOf('\n', end.start) + 1;
        this.#marked = { start, end: stop };
        const lines = this.source.slice(start, Math.max(start, stop)).replace(/\n$/, '').split('\n');
        this.#parts.push({ at: start, text: lines.map((line) => line.replace(/^ {4}/, '')).join('\n') });
    }

    add(directive: ConfDirective): void {
        if (this.#marked && directive.start >= this.#marked.start && directive.start < this.#marked.end) {
            return;
        }

        const lineStart = this.source.lastIndexOf('\n', directive.start) + 1;
        const indent = this.source.slice(lineStart, directive.start);
        const text = this.source.slice(directive.start, directive.end);
        const dedented = /^[ \t]*$/.test(indent)
            ? text.split('\n').map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line))
            : [text];
        this.#parts.push({ at: directive.start, text: dedented.join('\n') });
    }

    text(): string | undefined {
        const text = this.#parts
            .sort((a, b) => a.at - b.at)
            .map((part) => part.text)
            .join('\n')
            .replace(/^\s*\n/, '')
            .trimEnd();
        return text === '' ? undefined : text;
    }
}

/** The outpost header an `$upstream_http_*` variable reads, named as the model names it. */
function outpostHeaderOf(upstream: string): string | undefined {
    const answers = forwardAuthKinds().flatMap(({ contract }) => contract.headers);
    const known = [...answers, ...identityHeaders()].find((header) => forwardedVariable(header).upstream === upstream);
    if (known) {
        return known;
    }

    const match = /^\$upstream_http_([a-z0-9_]+)$/.exec(upstream);
    return match?.[1] ? match[1].replace(/_/g, '-') : undefined;
}

/** Forward auth as the kind whose outpost location the server has writes it; null when it has none. */
function readForwardAuth(
    server: ConfDirective,
    guardedHeaders: string[] | undefined,
    identityHeaders: Record<string, string> = {},
): ForwardAuthSpec | null {
    for (const { kind, contract } of forwardAuthKinds()) {
        const outpost = locationWithPath(server, contract.outpostPath);
        const proxyPass = outpost ? singleArgument(body(outpost), 'proxy_pass') : undefined;
        if (!proxyPass) {
            continue;
        }

        const signIn = locationWithPath(server, contract.signInLocation);
        const target = signIn ? first(body(signIn), 'return')?.args[1]?.value : undefined;
        return {
            ...modelKind(kind),
            outpostUrl: proxyPass.endsWith(contract.outpostPath) ? proxyPass.slice(0, -contract.outpostPath.length) : proxyPass,
            signInPath: target?.split('?rd=')[0] ?? contract.signInPath,
            headers: guardedHeaders ?? [...contract.headers],
            ...(Object.keys(identityHeaders).length > 0 ? { identityHeaders } : {}),
        };
    }

    return null;
}

function readServerHeaders(server: ConfDirective, extra: ExtraCollector): Record<string, string> {
    const headers: Record<string, string> = {};
    for (const directive of directivesNamed(body(server), 'add_header')) {
        const [name = '', value = '', flag] = argumentValues(directive);
        const understood = passes(checkHeaderName, name) && passes(checkHeaderValue, value) && directive.args.length <= 3;
        if (understood && (flag === undefined || flag === 'always')) {
            headers[name] = value;
        } else {
            extra.add(directive);
        }
    }

    return headers;
}

/** The locations the model writes itself: ACME's, and each kind's outpost and sign-in redirect. */
const modelLocations = () =>
    new Set([ACME_PATH, ...forwardAuthKinds().flatMap(({ contract }) => [contract.outpostPath, contract.signInLocation])]);

/** A line a kind's contract writes as its directive's name and arguments; none for a comment. */
function directiveOf(line: string): string[] {
    return line.startsWith('#') ? [] : line.replace(/;\s*$/, '').split(/\s+/).filter(Boolean);
}

/** The server-level directives the kind's forward auth writes (`proxy_buffers 8 16k`): name → arguments. */
function forwardAuthServerDirectives(forwardAuth: ForwardAuthSpec): Record<string, string> {
    const lines = forwardAuthContract(forwardAuth).nginx(forwardAuth.outpostUrl, forwardAuth.signInPath ?? '').server;
    const directives = lines.map(directiveOf).filter((directive) => directive.length > 0);
    return Object.fromEntries(directives.map(([name = '', ...args]) => [name, args.join(' ')]));
}
const SERVER_DIRECTIVES = new Set([
    'listen',
    'server_name',
    'ssl_certificate',
    'ssl_certificate_key',
    'client_max_body_size',
    'add_header',
]);

function readLocations(server: ConfDirective, headers: Record<string, string>, extra: ExtraCollector) {
    const locations: LocationSpec[] = [];
    let forwarded: string[] | undefined;
    let identityHeaders: Record<string, string> | undefined;
    const modelled = modelLocations();
    for (const directive of directivesNamed(body(server), 'location')) {
        if (directive.args.some((argument) => modelled.has(argument.value))) {
            continue;
        }

        const reader = new LocationReader(headers);
        const location = reader.read(directive);
        if (location) {
            locations.push(location);
            forwarded ??= reader.auth ? reader.forwarded : undefined;
            identityHeaders ??= reader.auth ? reader.identityHeaders : undefined;
        } else {
            extra.add(directive);
        }
    }

    return { locations, forwarded, identityHeaders };
}

function collectUnknown(server: ConfDirective, forwardAuth: ForwardAuthSpec | null, extra: ExtraCollector): void {
    const forwardAuthDirectives = forwardAuth ? forwardAuthServerDirectives(forwardAuth) : {};
    for (const directive of body(server)) {
        const known = SERVER_DIRECTIVES.has(directive.name) || directive.name === 'location';
        if (!known && forwardAuthDirectives[directive.name] !== argumentValues(directive).join(' ')) {
            extra.add(directive);
        }
    }
}

function pickServers(directives: ConfDirective[]): { main: ConfDirective; plain: ConfDirective | undefined } {
    const servers = directivesNamed(directives, 'server').filter((server) => server.block);
    const secure = servers.find(isSslServer);
    const proxying = servers.find((server) =>
        directivesNamed(body(server), 'location').some((location) => first(body(location), 'proxy_pass')),
    );
    const main = secure ?? proxying ?? servers[0];
    if (!main) {
        throw new ValidationError('text: no server block');
    }

    const plain = servers.find((server) => server !== main && !isSslServer(server)) ?? (secure ? undefined : main);
    return { main, plain };
}

/** The text's directives; text that does not read, or nests too deep, is a ValidationError naming its line. */
function readSiteTree(text: string): ReturnType<typeof readConf> {
    try {
        return readConf(text);
    } catch (error) {
        if (error instanceof ConfSyntaxError) {
            throw new ValidationError(`text: ${error.message}`);
        }

        throw error;
    }
}

function readSpec(text: string, tree: ReturnType<typeof readConf>): SiteSpec {
    const { main, plain } = pickServers(tree.directives);
    const extra = new ExtraCollector(text);
    extra.markedSection(main, tree.comments);
    const headers = readServerHeaders(main, extra);
    const { locations, forwarded, identityHeaders } = readLocations(main, headers, extra);
    const forwardAuth = readForwardAuth(main, forwarded, identityHeaders);
    collectUnknown(main, forwardAuth, extra);
    const secure = isSslServer(main);
    const acme = locationWithPath(plain ?? main, ACME_PATH) ?? locationWithPath(main, ACME_PATH);
    const names = first(body(main), 'server_name') ?? first(body(plain ?? main), 'server_name');
    const clientMaxBodySize = singleArgument(body(main), 'client_max_body_size');
    const acmeChallengeRoot = acme ? singleArgument(body(acme), 'root') : undefined;
    const extraText = extra.text();
    const address = listenAddress(main);
    return {
        serverNames: names ? argumentValues(names) : [],
        ...(address !== undefined ? { listenAddress: address } : {}),
        http: { port: (plain ? listenPort(plain) : undefined) ?? 80 },
        ...(secure ? { https: readHttps(main) } : {}),
        locations,
        ...(clientMaxBodySize !== undefined ? { clientMaxBodySize } : {}),
        ...(Object.keys(headers).length > 0 ? { headers } : {}),
        ...(acmeChallengeRoot !== undefined ? { acmeChallengeRoot } : {}),
        forwardAuth,
        ...(extraText !== undefined ? { extra: extraText } : {}),
    };
}

function readHttps(server: ConfDirective): NonNullable<SiteSpec['https']> {
    return {
        port: listenPort(server) ?? 443,
        certificate: singleArgument(body(server), 'ssl_certificate') ?? '',
        certificateKey: singleArgument(body(server), 'ssl_certificate_key') ?? '',
    };
}

/** The model read from site text, and the text itself, unchanged; what it would make nginx reach is not judged. */
export function readSite(text: string): { spec: SiteSpec; text: string } {
    return { spec: readSpec(text, readSiteTree(text)), text };
}

/**
 * The model read from site text, and the text itself, unchanged. Text that makes nginx read, write or run
 * what a site may not is refused; without places, only what no site may do (see site-access.ts).
 */
export function parseSite(text: string, places?: SitePlaces): { spec: SiteSpec; text: string } {
    const tree = readSiteTree(text);
    assertHostAccess(tree.directives, places);
    return { spec: readSpec(text, tree), text };
}
