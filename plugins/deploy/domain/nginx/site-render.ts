/** Renders a checked site model to nginx configuration text. */
import { assertRenderable } from './site-check.ts';
import {
    ACME_PATH,
    DEFAULT_ACME_ROOT,
    type ForwardAuthSpec,
    forwardAuthContract,
    identityHeaders,
    type LocationSpec,
    modelKind,
    type SiteSpec,
} from './site-types.ts';
import { EXTRA_BEGIN, EXTRA_END } from './site-values.ts';

export const SITE_HEADER = '# nginx site written by Gatehouse. Edits by hand are kept as written.';

/**
 * The standard request headers every proxying location sends. X-Forwarded-Host carries the port a visitor used
 * (Host has none), so that apps building their own URLs (an OpenID redirect URI) keep it.
 */
export const PROXY_HEADERS: Array<[string, string]> = [
    ['Host', '$host'],
    ['X-Real-IP', '$remote_addr'],
    ['X-Forwarded-For', '$proxy_add_x_forwarded_for'],
    ['X-Forwarded-Proto', '$scheme'],
    ['X-Forwarded-Host', '$http_host'],
];
/**
 * An app that does not know it sits behind the proxy builds its redirects from Host alone (`http://app.example/x`, or
 * `https://app.example/x` when it heeds X-Forwarded-Proto): they are sent on with the scheme and port the visitor
 * used, so that they neither downgrade to HTTP nor lose a port.
 */
export const PROXY_REDIRECTS = [
    ['http://$host/', '$scheme://$http_host/'],
    ['https://$host/', '$scheme://$http_host/'],
];
export const WEBSOCKET_HEADERS: Array<[string, string]> = [
    ['Upgrade', '$http_upgrade'],
    ['Connection', 'upgrade'],
];

/** The model with its defaults filled in and empty optional parts left out: what parseSite gives back. */
export function normalizeSite(spec: SiteSpec): SiteSpec {
    const extra = spec.extra?.replace(/^\s*\n/, '').trimEnd();
    return {
        serverNames: [...spec.serverNames],
        ...(spec.listenAddress ? { listenAddress: spec.listenAddress } : {}),
        http: { port: spec.http.port },
        ...(spec.https
            ? { https: { port: spec.https.port, certificate: spec.https.certificate, certificateKey: spec.https.certificateKey } }
            : {}),
        locations: spec.locations.map(normalizeLocation),
        ...(spec.clientMaxBodySize !== undefined ? { clientMaxBodySize: spec.clientMaxBodySize } : {}),
        ...(spec.headers && Object.keys(spec.headers).length > 0 ? { headers: { ...spec.headers } } : {}),
        acmeChallengeRoot: spec.acmeChallengeRoot ?? DEFAULT_ACME_ROOT,
        forwardAuth: spec.forwardAuth ? normalizeForwardAuth(spec.forwardAuth) : null,
        ...(extra ? { extra } : {}),
    };
}

function normalizeLocation(location: LocationSpec): LocationSpec {
    return {
        path: location.path,
        ...(location.exact ? { exact: true } : {}),
        proxyPass: location.proxyPass,
        ...(location.websocket ? { websocket: true } : {}),
        ...(location.headers && Object.keys(location.headers).length > 0 ? { headers: { ...location.headers } } : {}),
        ...(location.auth ? { auth: true } : {}),
    };
}

function normalizeForwardAuth(forwardAuth: ForwardAuthSpec): ForwardAuthSpec {
    const contract = forwardAuthContract(forwardAuth);
    return {
        ...modelKind(forwardAuth.kind),
        outpostUrl: forwardAuth.outpostUrl,
        signInPath: forwardAuth.signInPath ?? contract.signInPath,
        headers: [...(forwardAuth.headers ?? contract.headers)],
        ...(forwardAuth.identityHeaders && Object.keys(forwardAuth.identityHeaders).length > 0
            ? { identityHeaders: { ...forwardAuth.identityHeaders } }
            : {}),
    };
}

const quote = (value: string): string => `"${value}"`;

/** The nginx variable that carries an outpost response header: X-authentik-email → authentik_email's upstream name. */
export function forwardedVariable(header: string): { variable: string; upstream: string } {
    const snake = header.toLowerCase().replace(/-/g, '_');
    return { variable: `$fa_${snake}`, upstream: `$upstream_http_${snake}` };
}

class Writer {
    readonly #lines: string[] = [];
    #depth = 0;

    line(text = ''): this {
        this.#lines.push(text === '' ? '' : `${'    '.repeat(this.#depth)}${text}`);
        return this;
    }

    open(text: string): this {
        this.line(`${text} {`);
        this.#depth += 1;
        return this;
    }

    close(): this {
        this.#depth -= 1;
        return this.line('}');
    }

    raw(lines: string[]): this {
        this.#lines.push(...lines);
        return this;
    }

    text(): string {
        return `${this.#lines.join('\n')}\n`;
    }
}

function writeServerStart(writer: Writer, spec: SiteSpec, port: number, ssl: boolean): void {
    const suffix = ssl ? ' ssl' : '';
    writer.open('server');
    if (spec.listenAddress) {
        const address = spec.listenAddress.includes(':') ? `[${spec.listenAddress}]` : spec.listenAddress;
        writer.line(`listen ${address}:${port}${suffix};`);
    } else {
        writer.line(`listen ${port}${suffix};`).line(`listen [::]:${port}${suffix};`);
    }

    writer.line(`server_name ${spec.serverNames.join(' ')};`).line();
}

function writeAcmeLocation(writer: Writer, spec: SiteSpec): void {
    writer.open(`location ^~ ${ACME_PATH}`);
    writer.line(`root ${spec.acmeChallengeRoot ?? DEFAULT_ACME_ROOT};`).line(`default_type ${quote('text/plain')};`);
    writer.close().line();
}

function writeRedirectServer(writer: Writer, spec: SiteSpec, httpsPort: number): void {
    writeServerStart(writer, spec, spec.http.port, false);
    writeAcmeLocation(writer, spec);
    const host = httpsPort === 443 ? '$host' : `$host:${httpsPort}`;
    writer.open('location /').line(`return 301 https://${host}$request_uri;`).close();
    writer.close();
}

function writeResponseHeaders(writer: Writer, headers: Record<string, string> | undefined): void {
    for (const [name, value] of Object.entries(headers ?? {})) {
        writer.line(`add_header ${name} ${quote(value)} always;`);
    }
}

function writeServerSettings(writer: Writer, spec: SiteSpec): void {
    if (spec.clientMaxBodySize !== undefined) {
        writer.line(`client_max_body_size ${spec.clientMaxBodySize};`);
    }

    writeResponseHeaders(writer, spec.headers);
    if (spec.clientMaxBodySize !== undefined || Object.keys(spec.headers ?? {}).length > 0) {
        writer.line();
    }
}

/** The kind's forward-auth blocks: its server-level lines, the outpost's location and the sign-in redirect's. */
function writeOutpostLocations(writer: Writer, forwardAuth: ForwardAuthSpec): void {
    const contract = forwardAuthContract(forwardAuth);
    const nginx = contract.nginx(forwardAuth.outpostUrl, forwardAuth.signInPath ?? contract.signInPath);
    nginx.server.forEach((line) => writer.line(line));
    writer.line().open(`location ${contract.outpostPath}`);
    nginx.outpost.forEach((line) => writer.line(line));
    writeIdentityClears(writer, []);
    writer.close().line();
    writer.open(`location ${contract.signInLocation}`);
    nginx.signIn.forEach((line) => writer.line(line));
    writer.close().line();
}

/** Clears every identity header this location does not set itself, so that no visitor's copy passes on. */
function writeIdentityClears(writer: Writer, setHere: string[]): void {
    const set = new Set(setHere.map((header) => header.toLowerCase()));
    for (const header of identityHeaders().filter((name) => !set.has(name.toLowerCase()))) {
        writer.line(`proxy_set_header ${header} ${quote('')};`);
    }
}

/** The forward-auth check; answers the request headers it sets from the outpost's answer. */
function writeAuthCheck(writer: Writer, spec: SiteSpec, forwardAuth: ForwardAuthSpec): string[] {
    const contract = forwardAuthContract(forwardAuth);
    contract.nginx(forwardAuth.outpostUrl, forwardAuth.signInPath ?? contract.signInPath).check.forEach((line) => writer.line(line));
    // An add_header here hides the server's own add_header lines from this location, so they are repeated.
    writeResponseHeaders(writer, spec.headers);
    const forwarded = forwardAuth.headers ?? contract.headers;
    for (const header of forwarded) {
        const { variable, upstream } = forwardedVariable(header);
        writer.line(`auth_request_set ${variable} ${upstream};`).line(`proxy_set_header ${header} ${variable};`);
    }

    const identity = Object.entries(forwardAuth.identityHeaders ?? {});
    for (const [header, answer] of identity) {
        // The answer's variable is set above when the outpost header is forwarded; otherwise here.
        const { variable, upstream } = forwardedVariable(answer);
        if (!forwarded.some((name) => name.toLowerCase() === answer.toLowerCase())) {
            writer.line(`auth_request_set ${variable} ${upstream};`);
        }

        writer.line(`proxy_set_header ${header} ${variable};`);
    }

    return [...forwarded, ...identity.map(([header]) => header)];
}

function writeProxyLocation(writer: Writer, spec: SiteSpec, location: LocationSpec): void {
    writer.open(`location ${location.exact ? '= ' : ''}${location.path}`);
    writer.line(`proxy_pass ${location.proxyPass};`).line('proxy_http_version 1.1;');
    for (const redirect of PROXY_REDIRECTS) {
        writer.line(`proxy_redirect ${redirect.join(' ')};`);
    }

    for (const [name, value] of PROXY_HEADERS) {
        writer.line(`proxy_set_header ${name} ${value};`);
    }

    if (location.websocket) {
        writer.line('proxy_set_header Upgrade $http_upgrade;').line(`proxy_set_header Connection ${quote('upgrade')};`);
    }

    for (const [name, value] of Object.entries(location.headers ?? {})) {
        writer.line(`proxy_set_header ${name} ${quote(value)};`);
    }

    const fromAuth = location.auth && spec.forwardAuth ? writeAuthCheck(writer, spec, spec.forwardAuth) : [];
    writeIdentityClears(writer, [...fromAuth, ...Object.keys(location.headers ?? {})]);
    writer.close();
}

function writeExtra(writer: Writer, extra: string | undefined): void {
    if (!extra) {
        return;
    }

    writer.line().line(`# ${EXTRA_BEGIN}`);
    writer.raw(extra.split('\n').map((line) => (line === '' ? '' : `    ${line}`)));
    writer.line(`# ${EXTRA_END}`);
}

function writeProxyServer(writer: Writer, spec: SiteSpec): void {
    const port = spec.https?.port ?? spec.http.port;
    writeServerStart(writer, spec, port, spec.https !== undefined);
    if (spec.https) {
        writer.line(`ssl_certificate ${spec.https.certificate};`).line(`ssl_certificate_key ${spec.https.certificateKey};`).line();
    } else {
        writeAcmeLocation(writer, spec);
    }

    writeServerSettings(writer, spec);
    if (spec.forwardAuth) {
        writeOutpostLocations(writer, spec.forwardAuth);
    }

    spec.locations.forEach((location, index) => {
        if (index > 0) {
            writer.line();
        }

        writeProxyLocation(writer, spec, location);
    });
    writeExtra(writer, spec.extra);
    writer.close();
}

/** The site as nginx configuration text; a model that is not safe to render is a ValidationError naming the field. */
export function renderSite(input: SiteSpec): string {
    assertRenderable(input);
    const spec = normalizeSite(input);
    const writer = new Writer().line(SITE_HEADER).line();
    if (spec.https) {
        writeRedirectServer(writer, spec, spec.https.port);
        writer.line();
    }

    writeProxyServer(writer, spec);
    return writer.text();
}
