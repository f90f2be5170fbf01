/**
 * Runs the real `nginx -t` on one site in a throw-away prefix: a temporary directory holding a main
 * configuration that includes only this site, with its pid path inside it, logs sent to /dev/null and
 * temp paths in a per-process work directory, so it works without root and never touches the host's
 * nginx. In the copy of the site, certificate paths are rewritten to one self-signed stand-in pair (made
 * once per process with openssl), log paths to /dev/null, temp and cache paths and unix sockets into the
 * prefix, relative includes to the configuration directory (where the site would be included from), and
 * privileged listen ports (below 1024) to 40000 + port, because `nginx -t` does bind its listening
 * sockets (a port in use is ignored in test mode, a port a non-root user may not bind is not). Every
 * rewrite stays on its line, so nginx's line numbers are the site's, and messages name the original ports.
 *
 * nginx -t may run as root, so the site must first pass site-access.ts (text that does not read never
 * reaches nginx), and no message of nginx about a file outside the test prefix is passed on: it could
 * tell whether a host file exists, or quote it. At most MAX_RUNNING_TESTS run at once.
 */
import { spawn } from 'node:child_process';
import Fs from 'node:fs';
import Os from 'node:os';
import Path from 'node:path';

import { ServiceError, TooManyRequestsError, ValidationError } from '../../../../lib/errors.ts';
import { nginxBinary } from '../host/nginx-binary.ts';
import { makeSelfSignedCertificate } from '../host/self-signed.ts';
import { assertHostAccess, DEFAULT_NGINX_CONF_DIR, eachDirective, type SitePlaces } from './site-access.ts';
import { type ConfDirective, type ConfFile, ConfSyntaxError, ConfTooDeepError, readConf } from './syntax.ts';

export interface NginxMessage<Level extends 'error' | 'warning' = 'error'> {
    path: string;
    level: Level;
    message: string;
    line?: number;
}

export interface SiteTextValidation {
    ok: boolean;
    errors: Array<NginxMessage<'error'>>;
    /** nginx's own warnings (conflicting server names, deprecated parameters). */
    warnings: Array<NginxMessage<'warning'>>;
}

export interface NginxPrefix {
    dir: string;
    mainConf: string;
    siteConf: string;
    /** The directory of the per-process stand-ins and temp paths. */
    workspace: string;
}

export class NginxUnavailableError extends ServiceError {
    constructor(binary: string) {
        super(`nginx was not found at ${binary}; install the nginx package or set NGINX_BIN`, 503);
    }
}

/** Too many checks at once: MAX_RUNNING_TESTS run and MAX_WAITING_TESTS wait already. */
export class NginxBusyError extends TooManyRequestsError {
    constructor() {
        super('nginx -t is busy with other checks; try again in a moment', 1);
    }
}

const SITE_FILE = 'site.conf';
const MAIN_FILE = 'nginx.conf';
const TEST_TIMEOUT_MS = 20_000;
const TEMP_KINDS = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'];
/** Logs go nowhere: nginx -t prints its messages on standard error whatever the error log. */
const DISCARD = '/dev/null';

interface CommandResult {
    code: number | null;
    stderr: string;
}

interface Workspace {
    /** Where the temp paths point: nginx -t creates them once and never writes into them. */
    tempDir: string;
    certificate: string;
    key: string;
}

let workspace: Promise<Workspace> | undefined;

async function createWorkspace(): Promise<Workspace> {
    const dir = await Fs.promises.mkdtemp(Path.join(Os.tmpdir(), 'gatehouse-nginx-stand-in-'));
    process.once('exit', () => Fs.rmSync(dir, { recursive: true, force: true }));
    const certificate = Path.join(dir, 'stand-in.crt');
    const key = Path.join(dir, 'stand-in.key');
    await makeSelfSignedCertificate({ certificate, key, subject: '/CN=gatehouse-stand-in', days: 3650 });

    const tempDir = Path.join(dir, 'temp');
    await Fs.promises.mkdir(tempDir);
    return { tempDir, certificate, key };
}

/** One self-signed stand-in pair and temp directory per process, made on first use (and again if a temp cleaner removed them). */
async function sharedWorkspace(): Promise<Workspace> {
    const current = await (workspace ??= createWorkspace());
    if (![current.certificate, current.key, current.tempDir].every((path) => Fs.existsSync(path))) {
        workspace = createWorkspace();
        return await workspace;
    }

    return current;
}

export const PORT_SHIFT = 40_000;

/** `80`, `[::]:443`, `127.0.0.1` (port 80 implied) → the same address on PORT_SHIFT + port; unix sockets and high ports stay. */
function unprivilegedListen(value: string): string | undefined {
    if (value.startsWith('unix:')) {
        return undefined;
    }

    const match = /^(?:(.*):)?([0-9]+)$/.exec(value);
    const address = match ? match[1] : value;
    const port = match ? Number(match[2]) : 80;
    if (port >= 1024) {
        return undefined;
    }

    return address === undefined ? String(PORT_SHIFT + port) : `${address}:${PORT_SHIFT + port}`;
}

function originalPorts(message: string): string {
    return message.replace(/:(4[0-9]{4})\b/g, (whole, port: string) =>
        Number(port) - PORT_SHIFT < 1024 ? `:${Number(port) - PORT_SHIFT}` : whole,
    );
}

const quoted = (value: string): string => `"${value.replace(/[\\"]/g, (char) => `\\${char}`)}"`;

interface Replacement {
    start: number;
    end: number;
    text: string;
}

const STAND_IN_CERTIFICATE = /^(proxy_|grpc_|uwsgi_)?ssl_(certificate|trusted_certificate|client_certificate)$/;
const STAND_IN_KEY = /^(proxy_|grpc_|uwsgi_)?ssl_certificate_key$/;
const MADE_DIR = /_(temp|cache)_path$/;

/** Where the copy of the site points what nginx -t would otherwise read, write or make on the host. */
interface PrefixPaths {
    pair: Workspace;
    dir: string;
    configDir: string;
    /** Numbers the paths made in the prefix. */
    made: number;
}

function replacementFor(directive: ConfDirective, paths: PrefixPaths): string | undefined {
    const value = directive.args[0]?.value ?? '';
    const name = directive.name;
    if (value.includes('$') || value.startsWith('data:')) {
        return undefined;
    }

    if (STAND_IN_CERTIFICATE.test(name) || STAND_IN_KEY.test(name)) {
        return STAND_IN_KEY.test(name) ? paths.pair.key : paths.pair.certificate;
    }

    if (MADE_DIR.test(name) || (name === 'listen' && value.startsWith('unix:'))) {
        paths.made += 1;
        const made = Path.join(paths.dir, 'made', String(paths.made));
        return name === 'listen' ? `unix:${made}.sock` : made;
    }

    switch (name) {
        case 'access_log':
        case 'error_log':
            return value === 'off' || /^(syslog|memory):|^stderr$/.test(value) ? undefined : DISCARD;
        case 'include':
            return Path.isAbsolute(value) ? undefined : Path.join(paths.configDir, value);
        case 'listen':
            return unprivilegedListen(value);
        default:
            return undefined;
    }
}

/** The site text with the paths that would not exist in the prefix, or are not the test's to touch, rewritten in place. */
function rewriteForPrefix(text: string, tree: ConfFile, paths: PrefixPaths): string {
    const replacements: Replacement[] = [];
    eachDirective(tree.directives, (directive) => {
        const argument = directive.args[0];
        const replacement = argument ? replacementFor(directive, paths) : undefined;
        if (argument && replacement !== undefined) {
            replacements.push({ start: argument.start, end: argument.end, text: quoted(replacement) });
        }
    });
    return replacements
        .sort((a, b) => b.start - a.start)
        .reduce((result, { start, end, text: value }) => `${result.slice(0, start)}${value}${result.slice(end)}`, text);
}

function mainConfiguration(dir: string, tempDir: string): string {
    const temps = TEMP_KINDS.map((kind) => `    ${kind}_temp_path ${quoted(Path.join(tempDir, kind))};`);
    return [
        '# Throw-away main configuration for nginx -t: nothing outside this directory and the temp paths.',
        `pid ${quoted(Path.join(dir, 'nginx.pid'))};`,
        `error_log ${DISCARD};`,
        'events {}',
        'http {',
        '    types { text/html html; text/css css; application/javascript js; application/json json; image/png png; }',
        '    default_type application/octet-stream;',
        '    server_names_hash_bucket_size 128;',
        `    access_log ${DISCARD};`,
        ...temps,
        `    include ${quoted(Path.join(dir, SITE_FILE))};`,
        '}',
        '',
    ].join('\n');
}

/**
 * A fresh prefix holding the main configuration and the (rewritten) site; remove it with removeNginxPrefix.
 * The few small file operations are synchronous: each takes microseconds, and a round trip through the
 * thread pool costs more than the operation itself.
 */
export async function prepareNginxPrefix(text: string, configDir = DEFAULT_NGINX_CONF_DIR): Promise<NginxPrefix> {
    const tree = readConf(text);
    const shared = await sharedWorkspace();
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), 'gatehouse-nginx-'));
    const prefix = {
        dir,
        mainConf: Path.join(dir, MAIN_FILE),
        siteConf: Path.join(dir, SITE_FILE),
        workspace: Path.dirname(shared.tempDir),
    };
    Fs.mkdirSync(Path.join(dir, 'made'));
    Fs.writeFileSync(prefix.mainConf, mainConfiguration(dir, shared.tempDir));
    Fs.writeFileSync(prefix.siteConf, rewriteForPrefix(text, tree, { pair: shared, dir, configDir, made: 0 }));
    return prefix;
}

export function removeNginxPrefix(prefix: NginxPrefix): void {
    Fs.rmSync(prefix.dir, { recursive: true, force: true });
}

/** The arguments of `nginx -t` on a prepared prefix. */
export function nginxTestArguments(prefix: NginxPrefix): string[] {
    return ['-t', '-p', `${prefix.dir}/`, '-c', prefix.mainConf, '-e', DISCARD];
}

const MESSAGE = /^nginx: \[(emerg|alert|crit|error|warn)\] (.*)$/;
const LOCATION = / in (\S+):([0-9]+)$/;
const TEST_PREFIX = '<test prefix>';
export const HIDDEN_MESSAGE = 'nginx reported a problem with a file outside the test prefix; its message is not shown';

/** The message with the test's own directories named `<test prefix>`. */
function withinPrefix(text: string, prefix: NginxPrefix): string {
    return text.split(prefix.dir).join(TEST_PREFIX).split(prefix.workspace).join(TEST_PREFIX);
}

/**
 * Whether a message names a path outside the test prefix: a `/` that starts a word, a quoted string or a
 * parenthesis, as nginx and OpenSSL write file names. Location paths (`location "/api/"`) are URIs, not files.
 */
function namesHostPath(text: string): boolean {
    const withoutUris = text.replace(/location "[^"]*"/g, 'location').replace(/\/dev\/null/g, '');
    return /(^|[\s"'(=,:])\/(?!\/)/.test(withoutUris);
}

function readMessage(line: string, prefix: NginxPrefix): NginxMessage<'error' | 'warning'> | undefined {
    const match = MESSAGE.exec(line.trim());
    if (!match) {
        return undefined;
    }

    const level = match[1] === 'warn' ? 'warning' : 'error';
    const text = match[2] ?? '';
    const where = LOCATION.exec(text);
    if (where && where[1] !== prefix.siteConf && where[1] !== prefix.mainConf) {
        // A message about a line of another file (an include) could quote that file.
        return { path: 'text', level, message: HIDDEN_MESSAGE };
    }

    const body = withinPrefix(where ? text.slice(0, where.index) : text, prefix);
    const message = namesHostPath(body) ? HIDDEN_MESSAGE : originalPorts(body);
    if (where?.[1] === prefix.siteConf) {
        const lineNumber = Number(where[2]);
        return { path: 'text', level, message: `${message} (line ${lineNumber})`, line: lineNumber };
    }

    return { path: 'text', level, message };
}

export function interpretNginxTest(result: { code: number | null; stderr: string }, prefix: NginxPrefix): SiteTextValidation {
    const messages = result.stderr
        .split('\n')
        .map((line) => readMessage(line, prefix))
        .filter((message) => message !== undefined);
    const errors = messages.filter((message): message is NginxMessage<'error'> => message.level === 'error');
    const warnings = messages.filter((message): message is NginxMessage<'warning'> => message.level === 'warning');
    if (result.code !== 0 && errors.length === 0) {
        const detail = withinPrefix(result.stderr.trim(), prefix) || `exit code ${String(result.code)}`;
        errors.push({ path: 'text', level: 'error', message: namesHostPath(detail) ? HIDDEN_MESSAGE : `nginx -t failed: ${detail}` });
    }

    return { ok: result.code === 0 && errors.length === 0, errors, warnings };
}

/**
 * nginx's standard error goes to a file in the prefix, read once it exits: reading it through a pipe
 * measured 3 to 4 ms slower per run, about a sixth of the whole test.
 */
async function runNginxTest(prefix: NginxPrefix, binary: string): Promise<CommandResult> {
    const stderrFile = Path.join(prefix.dir, 'nginx.stderr');
    const descriptor = Fs.openSync(stderrFile, 'w+');
    try {
        const code = await new Promise<number | null>((resolve, reject) => {
            const child = spawn(binary, nginxTestArguments(prefix), { stdio: ['ignore', 'ignore', descriptor], timeout: TEST_TIMEOUT_MS });
            child.once('error', reject);
            child.once('exit', resolve);
        });
        return { code, stderr: Fs.readFileSync(stderrFile, 'utf8') };
    } finally {
        Fs.closeSync(descriptor);
    }
}

/** Runs nginx -t on a prepared prefix. */
export async function testNginxPrefix(prefix: NginxPrefix, binary: string): Promise<SiteTextValidation> {
    try {
        return interpretNginxTest(await runNginxTest(prefix, binary), prefix);
    } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
            throw new NginxUnavailableError(binary);
        }

        throw error;
    }
}

/** At most this many `nginx -t` at once; up to MAX_WAITING_TESTS more wait their turn, and further callers get 429. */
export const MAX_RUNNING_TESTS = 2;
export const MAX_WAITING_TESTS = 8;

/** A counting semaphore with a bounded queue: a released slot passes straight to the first waiter. */
class TestSlots {
    #running = 0;
    readonly #waiting: Array<() => void> = [];

    async acquire(): Promise<void> {
        if (this.#running < MAX_RUNNING_TESTS) {
            this.#running += 1;
            return;
        }

        if (this.#waiting.length >= MAX_WAITING_TESTS) {
            throw new NginxBusyError();
        }

        await new Promise<void>((resolve) => this.#waiting.push(resolve));
    }

    release(): void {
        const next = this.#waiting.shift();
        if (next) {
            next();
        } else {
            this.#running -= 1;
        }
    }
}

const slots = new TestSlots();

/** The text's directives; a syntax error is a failed check naming the line, too deep a nesting a ValidationError. */
function readForTest(text: string): ConfFile | SiteTextValidation {
    try {
        return readConf(text);
    } catch (error) {
        if (error instanceof ConfTooDeepError) {
            throw new ValidationError(`text: ${error.message}`);
        }

        if (error instanceof ConfSyntaxError) {
            const message = { path: 'text', level: 'error' as const, message: `${error.reason} (line ${error.line})`, line: error.line };
            return { ok: false, errors: [message], warnings: [] };
        }

        throw error;
    }
}

export interface SiteTestOptions {
    nginxBin?: string;
    /** The places the site may use (site-access.ts); without them, only what no site may do is refused. */
    places?: SitePlaces;
}

/**
 * `nginx -t` on the site text alone, isolated; errors carry the site's line numbers. Text that does not
 * read is answered without nginx; text that site-access.ts refuses is a ValidationError.
 */
export async function validateSiteText(text: string, options: SiteTestOptions = {}): Promise<SiteTextValidation> {
    const tree = readForTest(text);
    if ('ok' in tree) {
        return tree;
    }

    assertHostAccess(tree.directives, options.places);
    await slots.acquire();
    try {
        const prefix = await prepareNginxPrefix(text, options.places?.configDir);
        try {
            return await testNginxPrefix(prefix, nginxBinary(options.nginxBin));
        } finally {
            removeNginxPrefix(prefix);
        }
    } finally {
        slots.release();
    }
}
