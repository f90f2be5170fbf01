/**
 * Real software that no one here wrote, as local images built from Debian's packages (no registry on the Internet is
 * reachable): `debootstrap --variant=minbase` into a folder, the spec's files and commands, then `docker import`.
 * An image is tagged by a hash of its spec and of the mirror, and kept: the engine's images are the cache, also across
 * test runs. Builds take about a minute and run as root (debootstrap, chroot).
 */
import { spawn, spawnSync, type SpawnSyncOptions } from 'node:child_process';
import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Os from 'node:os';
import Path from 'node:path';

export interface DebianImageSpec {
    /** Repository part of the tag, e.g. `gatehouse-test/apache-sso`. */
    name: string;
    /** Packages for debootstrap's `--include`, with their dependencies (not their recommendations). */
    packages: string[];
    /**
     * Files written after debootstrap, by absolute path inside the image, through the image's own paths (a symbolic
     * link inside the image is followed there). An existing file keeps its owner and mode; a new one is 0644, or 0755
     * when its content starts with `#!`.
     */
    files?: Record<string, string>;
    /** Shell commands run with `chroot <dir> /bin/sh -c` after the files are written, in order. */
    commands?: string[];
    cmd: string[];
    expose?: number[];
    env?: Record<string, string>;
}

const SUITE = 'bookworm';
const SOURCES_FILE = '/etc/apt/sources.list.d/debian.sources';
/** Bumped when the way an image is built changes, so that images built the old way are not reused. */
const RECIPE_VERSION = 1;
const LOCK_WAIT_MS = 20 * 60_000;
const COMMAND_TIMEOUT_MS = 15 * 60_000;
const CHROOT_ENV = {
    PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    LANG: 'C',
    HOME: '/root',
    DEBIAN_FRONTEND: 'noninteractive',
};

/** Runs a command to its end; throws with the end of its output when it fails. */
function run(command: string, args: string[], options: SpawnSyncOptions = {}): string {
    const result = spawnSync(command, args, {
        encoding: 'utf8',
        maxBuffer: 64 * 1024 * 1024,
        timeout: COMMAND_TIMEOUT_MS,
        ...options,
    });
    if (result.status !== 0) {
        const output = `${String(result.stdout ?? '')}${String(result.stderr ?? '')}`.trim().split('\n').slice(-25);
        const reason = result.error?.message ?? `exit ${result.status ?? result.signal}`;
        throw new Error(`${command} ${args.join(' ')}: ${reason}\n${output.join('\n')}`);
    }

    return String(result.stdout ?? '');
}

function pause(ms: number): void {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** The deb822 stanzas of a sources file, as field maps (continuation lines and comments dropped). */
function sourceStanzas(text: string): Map<string, string>[] {
    return text
        .split(/\n\s*\n/)
        .map((block) => {
            const fields = new Map<string, string>();
            for (const line of block.split('\n')) {
                const match = /^([A-Za-z0-9-]+):\s*(.*)$/.exec(line);
                if (match?.[1] !== undefined && match[2] !== undefined) {
                    fields.set(match[1].toLowerCase(), match[2].trim());
                }
            }

            return fields;
        })
        .filter((fields) => fields.has('uris'));
}

/** The mirror debootstrap downloads from: the URI of the stanza whose suites include bookworm, else the first URI. */
export function debianMirror(sourcesFile = SOURCES_FILE): string {
    const stanzas = sourceStanzas(Fs.readFileSync(sourcesFile, 'utf8'));
    const suiteStanza = stanzas.find((fields) => (fields.get('suites') ?? '').split(/\s+/).includes(SUITE));
    const uri = (suiteStanza ?? stanzas[0])?.get('uris')?.split(/\s+/)[0];
    if (!uri) {
        throw new Error(`${sourcesFile} names no mirror (no URIs: line)`);
    }

    return uri;
}

function sortedEntries(record: Record<string, string> = {}): [string, string][] {
    return Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** `<name>:<hash>`: the first 16 hex digits of SHA-256 over the spec (package order aside) and the mirror. */
export function debianImageTag(spec: DebianImageSpec, mirror = debianMirror()): string {
    const canonical = JSON.stringify({
        recipe: RECIPE_VERSION,
        suite: SUITE,
        mirror,
        packages: [...spec.packages].sort(),
        files: sortedEntries(spec.files),
        commands: spec.commands ?? [],
        cmd: spec.cmd,
        env: sortedEntries(spec.env),
        expose: [...(spec.expose ?? [])].sort((a, b) => a - b),
    });
    return `${spec.name}:${Crypto.createHash('sha256').update(canonical).digest('hex').slice(0, 16)}`;
}

export function imageExists(tag: string): boolean {
    return spawnSync('docker', ['image', 'inspect', tag], { stdio: 'ignore', timeout: 60_000 }).status === 0;
}

/** The lock file of `key`; lock files stay (removing one would race with a waiter that has it open). */
export function lockPath(key: string): string {
    return Path.join(Os.tmpdir(), `gatehouse-debimg-${key.replace(/[^A-Za-z0-9_.-]/g, '_')}.lock`);
}

/**
 * Takes an exclusive lock on a file in the temporary folder and answers its release. The lock is flock(1) held by a
 * child that lives as long as its stdin: the kernel lets go when this process ends however it ends, so no stale lock
 * file can block a later run.
 */
export function lockExclusively(key: string): () => void {
    run('flock', ['--version']);
    const path = lockPath(key);
    const held = `${path}.${process.pid}-${Crypto.randomUUID()}`;
    const holder = spawn('flock', ['--exclusive', path, 'sh', '-c', ': > "$0" && exec cat > /dev/null', held], {
        stdio: ['pipe', 'ignore', 'ignore'],
    });
    holder.on('error', () => undefined);
    const release = () => {
        holder.stdin?.destroy();
        Fs.rmSync(held, { force: true });
    };
    const started = Date.now();
    let told = false;
    while (!Fs.existsSync(held)) {
        if (Date.now() - started > LOCK_WAIT_MS) {
            holder.kill();
            release();
            throw new Error(`gave up waiting for ${path} after ${LOCK_WAIT_MS} ms`);
        }

        if (!told && Date.now() - started > 1_000) {
            process.stderr.write(`debian-images: waiting for ${path}, held by another build\n`);
            told = true;
        }

        pause(100);
    }

    return release;
}

/** Runs `work` while holding the lock named `key` (see lockExclusively). */
export function withBuildLock<T>(key: string, work: () => T): T {
    const release = lockExclusively(key);
    try {
        return work();
    } finally {
        release();
    }
}

/** Writes a file inside the tree through the tree's own paths, so that its absolute links never reach the host. */
function writeInside(root: string, path: string, content: string): void {
    if (!Path.posix.isAbsolute(path)) {
        throw new Error(`${path}: files need an absolute path inside the image`);
    }

    const script = 'mkdir -p "$(dirname "$1")" && cat > "$1" && if [ "$2" = exec ]; then chmod 0755 "$1"; fi';
    const mode = content.startsWith('#!') ? 'exec' : 'keep';
    run('chroot', [root, '/bin/sh', '-c', script, 'sh', path, mode], { input: content, env: CHROOT_ENV });
}

/** Mount points at or under `folder`, deepest first, from this process's mount table. */
function mountsUnder(folder: string): string[] {
    return Fs.readFileSync('/proc/self/mountinfo', 'utf8')
        .split('\n')
        .map((line) => line.split(' ')[4]?.replace(/\\040/g, ' '))
        .filter((point): point is string => point !== undefined && (point === folder || point.startsWith(`${folder}/`)))
        .sort((a, b) => b.length - a.length);
}

/** Removes a build folder; a failed debootstrap can leave /proc or /sys mounted in it, which must not be emptied. */
function removeBuildFolder(folder: string): void {
    for (const point of mountsUnder(folder)) {
        spawnSync('umount', ['-l', point], { stdio: 'ignore' });
    }

    run('rm', ['-rf', '--one-file-system', folder]);
}

function dockerChanges(spec: DebianImageSpec): string[] {
    const changes = [`CMD ${JSON.stringify(spec.cmd)}`];
    for (const port of spec.expose ?? []) {
        changes.push(`EXPOSE ${port}`);
    }

    for (const [key, value] of sortedEntries(spec.env)) {
        changes.push(`ENV ${key}=${JSON.stringify(value)}`);
    }

    return changes.flatMap((change) => ['--change', change]);
}

function importTree(root: string, spec: DebianImageSpec, tag: string): void {
    const script = 'root=$1; tag=$2; shift 2; tar --numeric-owner -C "$root" -c . | docker import "$@" - "$tag"';
    run('bash', ['-o', 'pipefail', '-c', script, 'bash', root, tag, ...dockerChanges(spec)]);
}

function seconds(since: number): string {
    return `${((Date.now() - since) / 1000).toFixed(1)} s`;
}

function build(spec: DebianImageSpec, tag: string, mirror: string): void {
    const started = Date.now();
    const phases: string[] = [];
    const folder = Fs.mkdtempSync(Path.join(Os.tmpdir(), 'gatehouse-debimg-build-'));
    const root = Path.join(folder, 'root');
    try {
        const include = spec.packages.length > 0 ? [`--include=${spec.packages.join(',')}`] : [];
        run('debootstrap', ['--variant=minbase', ...include, SUITE, root, mirror]);
        phases.push(`debootstrap ${seconds(started)}`);
        const customised = Date.now();
        for (const [path, content] of sortedEntries(spec.files)) {
            writeInside(root, path, content);
        }

        for (const command of spec.commands ?? []) {
            run('chroot', [root, '/bin/sh', '-c', command], { env: CHROOT_ENV });
        }

        run('chroot', [root, '/bin/sh', '-c', 'apt-get clean && rm -rf /var/lib/apt/lists/*'], { env: CHROOT_ENV });
        phases.push(`files and commands ${seconds(customised)}`);
        const imported = Date.now();
        importTree(root, spec, tag);
        phases.push(`import ${seconds(imported)}`);
    } finally {
        removeBuildFolder(folder);
    }

    process.stderr.write(`debian-images: built ${tag} in ${seconds(started)} (${phases.join(', ')})\n`);
}

/**
 * The tag of the image for `spec`, built first unless the engine has it. Builds of one image are serialised across
 * processes by a lock; whoever waited finds the image built and reuses it.
 */
export function debianImage(spec: DebianImageSpec): string {
    const mirror = debianMirror();
    const tag = debianImageTag(spec, mirror);
    if (imageExists(tag)) {
        return tag;
    }

    withBuildLock(tag, () => {
        if (!imageExists(tag)) {
            build(spec, tag, mirror);
        }
    });
    return tag;
}

/** Apache in the foreground with Debian's envvars (apache2ctl reads them), logging to the container's output. */
export const APACHE_CMD = ['apache2ctl', '-D', 'FOREGROUND'];
/**
 * A restarted container keeps the last run's pid file and CGI daemon socket in /run/apache2, and Apache's CGI daemon
 * then leaves CGI requests unanswered: the official httpd image removes its pid file before starting, and so does this.
 */
export const APACHE_FRESH_CMD = ['sh', '-c', 'rm -rf /run/apache2/* && exec apache2ctl -D FOREGROUND'];
export const APACHE_LOGS_TO_OUTPUT = [
    'ln -sf /dev/stdout /var/log/apache2/access.log',
    'ln -sf /dev/stderr /var/log/apache2/error.log',
    'ln -sf /dev/stdout /var/log/apache2/other_vhosts_access.log',
];
export const APACHE_SERVER_CONF = '/etc/apache2/conf-available/gatehouse-test.conf';

/**
 * Tells who Apache says the visitor is: the authenticated user, the request's headers (identity headers such as
 * Remote-User or X-idp-username among them, cookies and credentials left out), and the claims and attributes the
 * OpenID Connect and SAML modules pass on.
 */
const WHOAMI_CGI = `#!/bin/sh
printf 'Content-Type: text/plain; charset=utf-8\\n\\n'
printf 'REMOTE_USER=%s\\n' "\${REMOTE_USER:-}"
printf 'AUTH_TYPE=%s\\n' "\${AUTH_TYPE:-}"
env | grep -E '^(HTTP_|OIDC_CLAIM_|MELLON_)' | grep -vE '^(HTTP_COOKIE|HTTP_AUTHORIZATION|HTTP_PROXY_AUTHORIZATION|MELLON_SESSION)=' | sort
`;

/**
 * Apache with mod_auth_openidc and mod_auth_mellon loaded, and no site bound to a sign-in method: the server itself
 * (no virtual host) serves /var/www/html and /cgi-bin/whoami, so a test mounts one file per method into
 * /etc/apache2/conf-enabled/ (e.g. `-v method.conf:/etc/apache2/conf-enabled/zz-method.conf:ro`) and its
 * `<Location>`, `OIDC*`, `Mellon*` and `Rewrite*` lines apply as they are.
 */
export const APACHE_SSO: DebianImageSpec = {
    name: 'gatehouse-test/apache-sso',
    packages: ['apache2', 'libapache2-mod-auth-openidc', 'libapache2-mod-auth-mellon', 'ca-certificates'],
    files: {
        [APACHE_SERVER_CONF]: 'ServerName localhost\nDocumentRoot /var/www/html\n',
        '/var/www/html/index.html': 'apache sso test app\n',
        '/usr/lib/cgi-bin/whoami': WHOAMI_CGI,
    },
    commands: [
        'a2enmod -q auth_openidc auth_mellon headers cgid rewrite',
        'a2dissite -q 000-default',
        'a2enconf -q gatehouse-test',
        ...APACHE_LOGS_TO_OUTPUT,
        'apache2ctl -t',
    ],
    cmd: APACHE_FRESH_CMD,
    expose: [80],
};

/**
 * mod_auth_openidc as the app's OpenID relying party in APACHE_SSO, configured only from the variables the compose
 * file (or a recipe) gives it: OIDC_CONFIG_URL, OIDC_CLIENT_ID, OIDC_CLIENT_SECRET and APP_URL.
 */
export const APACHE_OIDC_CONF = [
    'OIDCProviderMetadataURL ${OIDC_CONFIG_URL}',
    'OIDCClientID ${OIDC_CLIENT_ID}',
    'OIDCClientSecret ${OIDC_CLIENT_SECRET}',
    'OIDCRedirectURI ${APP_URL}/oidc-callback',
    'OIDCCryptoPassphrase gatehouse-test-passphrase',
    'OIDCScope "openid email profile"',
    'OIDCRemoteUserClaim preferred_username',
    'OIDCXForwardedHeaders X-Forwarded-Host X-Forwarded-Proto',
    '<Location />',
    '    AuthType openid-connect',
    '    Require valid-user',
    '</Location>',
    '',
].join('\n');

/** The DokuWiki account made in the image (a test fixture, not a secret). */
export const DOKUWIKI_ADMIN = { username: 'admin', password: 'dokuwiki-admin-pass', name: 'Gatehouse Test Admin' };
/** bcrypt (cost 10) of DOKUWIKI_ADMIN.password, made with PHP's password_hash, which DokuWiki's authplain checks. */
const DOKUWIKI_ADMIN_HASH = '$2y$10$cM3QdXnjjwnEu9ofMkLSsueYDBs8HKdUVUDCAnGVCP.hFPsiydQwi';

/** Debian's apache.conf for DokuWiki, opened to every client (the package's default answers localhost only). */
const DOKUWIKI_APACHE_CONF = `RedirectMatch 302 ^/$ /dokuwiki/
AliasMatch ^/dokuwiki/sites/[^/]+$      /usr/share/dokuwiki/
AliasMatch ^/dokuwiki/sites/[^/]+/(.*)$ /usr/share/dokuwiki/$1
Alias      /dokuwiki                    /usr/share/dokuwiki/

<Directory /usr/share/dokuwiki/>
    Options +FollowSymLinks
    AllowOverride All
    Require all granted
</Directory>

<Directory /usr/share/dokuwiki/bin>
    Require all denied
</Directory>

<Directory /var/lib/dokuwiki/data>
    Require all denied
</Directory>
`;

const DOKUWIKI_LOCAL_PHP = `<?php
$conf['title'] = 'Gatehouse Test Wiki';
$conf['lang'] = 'en';
$conf['useacl'] = 1;
$conf['authtype'] = 'authplain';
$conf['passcrypt'] = 'bcrypt';
$conf['superuser'] = '@admin';
`;

const DOKUWIKI_USERS = `# users.auth.php
# <?php exit()?>
# Don't modify the lines above
#
# login:passwordhash:Real Name:email:groups,comma,separated
${DOKUWIKI_ADMIN.username}:${DOKUWIKI_ADMIN_HASH}:${DOKUWIKI_ADMIN.name}:admin@example.test:admin,user
`;

const DOKUWIKI_ACL = `# acl.auth.php
# <?php exit()?>
# Don't modify the lines above
*               @ALL          1
*               @user         8
`;

/**
 * Debian's dokuwiki under Apache with mod_php, at /dokuwiki (/ redirects there), with ACLs on and the admin account
 * of DOKUWIKI_ADMIN in group admin (the superuser group). Sign in with a form post to
 * /dokuwiki/doku.php?do=login carrying the form's `sectok` and the session cookie.
 */
export const DOKUWIKI: DebianImageSpec = {
    name: 'gatehouse-test/dokuwiki',
    packages: ['apache2', 'libapache2-mod-php8.2', 'dokuwiki'],
    files: {
        [APACHE_SERVER_CONF]: 'ServerName localhost\n',
        '/etc/dokuwiki/apache.conf': DOKUWIKI_APACHE_CONF,
        '/etc/dokuwiki/local.php': DOKUWIKI_LOCAL_PHP,
        // Links to /var/lib/dokuwiki/acl/, whose files keep the package's owner (www-data) and mode.
        '/etc/dokuwiki/users.auth.php': DOKUWIKI_USERS,
        '/etc/dokuwiki/acl.auth.php': DOKUWIKI_ACL,
    },
    commands: ['a2enconf -q gatehouse-test dokuwiki', ...APACHE_LOGS_TO_OUTPUT, 'apache2ctl -t'],
    cmd: APACHE_CMD,
    expose: [80],
};
