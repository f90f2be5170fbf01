/**
 * Which host files a site may make nginx read or write. nginx loads sites as root: whatever a directive
 * names is opened with root's rights when nginx (or `nginx -t`) loads the configuration, and its error
 * messages tell whether a file exists and quote what it read. So:
 *
 * - refused: directives that run code (load_module, perl, lua, njs, mruby); files read at load time
 *   (include, TLS files, data files) outside the places a site may use; files written or directories
 *   created as root (logs, temp and cache paths) outside nginx's own directories; `..` in any such path;
 * - risks (lint): what the workers serve or read while running (root, alias, auth_basic_user_file,
 *   WebDAV, `*_store`, unix sockets) outside the app's folders and the ACME webroot;
 * - allowed: the rest.
 *
 * The places: the app's own folders, the managed certificates of its domain, the ACME webroot and the
 * managed configuration (the main configuration's directory, where relative paths resolve, and the sites
 * directory). Without places (callers that know no app), what is never acceptable is still refused, and
 * every absolute include; other files read at load time are not judged, and every root is a risk.
 */
import Path from 'node:path';

import type { Config } from '../../../../lib/config.ts';
import { ValidationError } from '../../../../lib/errors.ts';
import { argumentValues, type ConfDirective } from './syntax.ts';

export interface SitePlaces {
    /** The app's own folders (`<APPS_DIR>/<name>`; without an app, APPS_DIR). */
    appDirs: string[];
    /** The managed certificates of the app's domain (`<CERTIFICATES_DIR>/<domain>`; without an app, CERTIFICATES_DIR). */
    certificateDirs: string[];
    acmeWebroot: string;
    /** The main configuration's directory: relative include and TLS paths resolve there. */
    configDir: string;
    /** NGINX_SITES_DIR. */
    sitesDir: string;
}

export interface AccessProblem {
    level: 'error' | 'risk';
    message: string;
}

export interface AccessFinding extends AccessProblem {
    line: number;
}

/** nginx's own configuration directory on Debian, where relative paths resolve without NGINX_CONF. */
export const DEFAULT_NGINX_CONF_DIR = '/etc/nginx';
/** Where logs may be written: nginx's own log directory, owned by root. */
const LOG_DIRS = ['/var/log/nginx'];
/** Where temp and cache directories may be made: nginx's own state directories, owned by root. */
const STATE_DIRS = ['/var/cache/nginx', '/var/lib/nginx'];
const LOG_SINKS = /^(off|stderr|syslog:.*|memory:.*|\/dev\/null|\/dev\/stderr|\/dev\/stdout)$/;

const RUNS_CODE = /^(load_module|perl|perl_.*|js_.*|njs_.*|mruby_.*|.*_by_lua.*|lua_.*)$/;
const TLS_FILES =
    /^(proxy_|grpc_|uwsgi_)?ssl_(certificate|certificate_key|trusted_certificate|client_certificate|crl|dhparam|password_file|stapling_file|session_ticket_key)$/;
const DATA_FILES = new Set(['geoip_country', 'geoip_city', 'geoip_org', 'geoip2', 'xslt_stylesheet', 'xml_entities']);
const LOGS = new Set(['access_log', 'error_log', 'ssl_key_log']);
const MADE_DIRS = /^((client_body|proxy|fastcgi|uwsgi|scgi)_temp_path|(proxy|fastcgi|uwsgi|scgi)_cache_path)$/;
const SERVED = new Set(['root', 'alias']);
const UPSTREAMS = new Set(['proxy_pass', 'fastcgi_pass', 'uwsgi_pass', 'scgi_pass', 'grpc_pass', 'memcached_pass']);
const STORES = new Set(['proxy_store', 'fastcgi_store', 'uwsgi_store', 'scgi_store']);
/** OpenSSL configuration commands that name no file. */
const SAFE_SSL_COMMANDS = new Set([
    'Options',
    'CipherString',
    'Ciphersuites',
    'Curves',
    'Groups',
    'Protocol',
    'MinProtocol',
    'MaxProtocol',
    'SignatureAlgorithms',
    'ClientSignatureAlgorithms',
    'ECDHParameters',
    'NumTickets',
    'RecordPadding',
]);

/** The places of an app's site, or of any app's site when none is named. */
export function sitePlaces(config: Config, app?: { name: string; domain: string }): SitePlaces {
    const { appsDir, certificatesDir, nginxSitesDir } = config.apps;
    return {
        appDirs: [app ? Path.join(appsDir, app.name) : appsDir],
        certificateDirs: [app ? Path.join(certificatesDir, app.domain) : certificatesDir],
        acmeWebroot: config.host.acmeWebroot,
        configDir: config.host.nginxConf ? Path.dirname(config.host.nginxConf) : DEFAULT_NGINX_CONF_DIR,
        sitesDir: nginxSitesDir,
    };
}

const isUnder = (path: string, dirs: string[]): boolean =>
    dirs.some((dir) => {
        const base = dir.replace(/\/+$/, '');
        return path === base || path.startsWith(`${base}/`);
    });

const climbs = (path: string): boolean => path.split('/').includes('..');

/** include takes glob patterns, and `.?` or `.*` match `..`: no pattern may match a name starting with a dot. */
const globReachesDots = (path: string): boolean => path.split('/').some((segment) => /[*?[]/.test(segment) && /^[.[]/.test(segment));

/** Where nginx reads a relative load-time path from: the configuration directory. */
function fromConfigDir(path: string, places: SitePlaces | undefined): string | undefined {
    if (Path.isAbsolute(path)) {
        return path;
    }

    return places ? Path.posix.join(places.configDir, path) : undefined;
}

type Check = (name: string, values: string[], places: SitePlaces | undefined) => AccessProblem | undefined;

const refuse = (message: string): AccessProblem => ({ level: 'error', message });
const risk = (message: string): AccessProblem => ({ level: 'risk', message });

const checkInclude: Check = (name, [path = ''], places) => {
    if (climbs(path) || globReachesDots(path)) {
        return refuse(`include ${path}: ".." and patterns that match it are not allowed`);
    }

    // A relative include resolves in the configuration directory, which it cannot leave without "..".
    if (!Path.isAbsolute(path) || (places && isUnder(path, [places.configDir, places.sitesDir]))) {
        return undefined;
    }

    const where = places ? `${places.configDir} or ${places.sitesDir}` : 'the nginx configuration directory (use a relative path)';
    return refuse(`include ${path}: only files of the managed configuration may be included (${where})`);
};

/** Files nginx reads as root while it loads the site: certificates, keys, DH parameters, data files. */
const checkLoadedFile: Check = (name, [path = ''], places) => {
    if (path.startsWith('data:') && !path.includes('$')) {
        return undefined;
    }

    if (path.startsWith('engine:')) {
        return refuse(`${name}: keys from OpenSSL engines are not allowed`);
    }

    if (path.includes('$') || climbs(path)) {
        return refuse(`${name} ${path}: variables and ".." are not allowed in file paths`);
    }

    const resolved = fromConfigDir(path, places);
    if (!places || resolved === undefined) {
        return undefined;
    }

    const allowed = [...places.certificateDirs, ...places.appDirs, places.configDir, places.sitesDir];
    if (isUnder(resolved, allowed)) {
        return undefined;
    }

    return refuse(`${name} ${path}: nginx reads it as root; use the app's certificate directory ${places.certificateDirs.join(', ')}`);
};

/** Log files are opened, and made, as root: a log in a system or configuration directory could plant a file there. */
const checkLog: Check = (name, [path = '']) => {
    if (LOG_SINKS.test(path) || (!path.includes('$') && !climbs(path) && isUnder(path, LOG_DIRS))) {
        return undefined;
    }

    return refuse(`${name} ${path}: logs go to ${LOG_DIRS.join(', ')}, syslog:, stderr or off (nginx writes them as root)`);
};

/** Temp and cache directories are made at load, and handed to nginx's worker user, by root. */
const checkMadeDir: Check = (name, [path = '']) => {
    if (!path.includes('$') && !climbs(path) && isUnder(path, STATE_DIRS)) {
        return undefined;
    }

    return refuse(`${name} ${path}: must be under ${STATE_DIRS.join(' or ')} (nginx makes it as root and gives it to its workers)`);
};

const checkSslCommand: Check = (name, [command = '']) =>
    SAFE_SSL_COMMANDS.has(command) ? undefined : refuse(`ssl_conf_command ${command}: only commands that name no file are allowed`);

/** A unix socket nginx listens on is made by root, mode 0666. */
const checkListen: Check = (name, [address = ''], places) => {
    if (!address.startsWith('unix:')) {
        return undefined;
    }

    const path = address.slice('unix:'.length);
    if (places && !climbs(path) && isUnder(path, places.appDirs)) {
        return undefined;
    }

    return refuse(`listen ${address}: nginx makes the socket as root; only in the app's folders`);
};

/** What the workers serve or read while running: a risk outside the app's folders and the ACME webroot. */
const checkServed: Check = (name, [path = ''], places) => {
    const inside = places && !path.includes('$') && !climbs(path) && isUnder(path, [...places.appDirs, places.acmeWebroot]);
    if (inside) {
        return undefined;
    }

    const where = places
        ? `outside the app's folders (${places.appDirs.join(', ')}) and the ACME webroot`
        : "that may be outside the app's folders";
    return risk(`${name} ${path} serves host files ${where}`);
};

const checkUserFile: Check = (name, [path = ''], places) => {
    if (path === 'off' || (places && !path.includes('$') && !climbs(path) && isUnder(path, places.appDirs))) {
        return undefined;
    }

    return risk(`${name} ${path}: nginx's workers read a host file outside the app's folders`);
};

const checkUpstream: Check = (name, [target = '']) =>
    /^([a-z]+:\/\/)?unix:/.test(target) ? risk(`${name} ${target}: talks to a host socket`) : undefined;

const checkStore: Check = (name, [value = '']) => (value === 'off' ? undefined : risk(`${name}: nginx's workers write files on the host`));

const refuseCode: Check = (name) => refuse(`${name}: directives that run code in nginx are not allowed`);

/** The first rule whose test matches a directive's name checks it. */
const RULES: Array<[(name: string) => boolean, Check]> = [
    [(name) => RUNS_CODE.test(name), refuseCode],
    [(name) => name === 'include', checkInclude],
    [(name) => TLS_FILES.test(name) || DATA_FILES.has(name), checkLoadedFile],
    [(name) => LOGS.has(name), checkLog],
    [(name) => MADE_DIRS.test(name), checkMadeDir],
    [(name) => name === 'listen', checkListen],
    [(name) => name === 'ssl_conf_command', checkSslCommand],
    [(name) => SERVED.has(name), checkServed],
    [(name) => name === 'auth_basic_user_file', checkUserFile],
    [(name) => UPSTREAMS.has(name), checkUpstream],
    [(name) => STORES.has(name) || name === 'dav_methods', checkStore],
];

/** What one directive with these arguments would make nginx read, write or run on the host, if anything. */
export function directiveAccess(name: string, values: string[], places?: SitePlaces): AccessProblem | undefined {
    const check = RULES.find(([matches]) => matches(name))?.[1];
    return check?.(name, values, places);
}

/** nginx keeps backslashes this reader drops, so an escaped path could name another file than the one checked. */
function escapedProblem(name: string): AccessProblem | undefined {
    return RULES.some(([matches]) => matches(name)) ? refuse(`${name}: backslash escapes are not allowed here`) : undefined;
}

/** Every directive, blocks included, in order, without recursion. */
export function eachDirective(directives: ConfDirective[], visit: (directive: ConfDirective) => void): void {
    const pending = directives.slice().reverse();
    for (let directive = pending.pop(); directive; directive = pending.pop()) {
        visit(directive);
        const block = directive.block ?? [];
        for (let index = block.length - 1; index >= 0; index -= 1) {
            pending.push(block[index] as ConfDirective);
        }
    }
}

/** What the directives would make nginx read, write or run on the host: refusals (`error`) and risks, in order. */
export function hostAccessFindings(directives: ConfDirective[], places?: SitePlaces): AccessFinding[] {
    const findings: AccessFinding[] = [];
    eachDirective(directives, (directive) => {
        const problem = directive.args.some((argument) => argument.escaped)
            ? escapedProblem(directive.name)
            : directiveAccess(directive.name, argumentValues(directive), places);
        if (problem) {
            findings.push({ ...problem, line: directive.line });
        }
    });
    return findings;
}

/**
 * The risks among the findings; the refusals are a ValidationError naming the first (and how many more),
 * as `text: line N: ...`.
 */
export function assertHostAccess(directives: ConfDirective[], places?: SitePlaces): AccessFinding[] {
    const findings = hostAccessFindings(directives, places);
    const refusals = findings.filter((finding) => finding.level === 'error');
    const [first] = refusals;
    if (first) {
        const more = refusals.length > 1 ? ` (and ${refusals.length - 1} more)` : '';
        throw new ValidationError(`text: line ${first.line}: ${first.message}${more}`);
    }

    return findings;
}
