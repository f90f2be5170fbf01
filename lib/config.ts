import Path from 'node:path';

import Joi from 'joi';

import { parseTrustedProxies } from './client-address.ts';
import { CRON_FORM, cronProblem } from './cron.ts';
import { parseAllowList } from './host-allow-list.ts';
import type { ThrottleLimits } from './throttle.ts';

export type ServiceName = 'git' | 'deploy';

export interface Config {
    port: number;
    /** The address the server listens on (HOST). */
    listenHost: string;
    publicUrl: string;
    dataDir: string;
    /** Bare git repositories, `<root>/<owner>/<name>.git` in lower case, as Gitea lays them out. */
    repositoriesDir: string;
    /** Package files, stored by their SHA-256. */
    packagesDir: string;
    databaseUrl: string;
    services: ServiceName[];
    masterKey: string | undefined;
    logLevel: string;
    /** Outgoing webhooks: which hosts they may reach, and how deliveries are timed and retried. */
    webhooks: WebhookConfig;
    /** Where the deploy manager keeps apps: their domains, files and nginx sites. */
    apps: {
        baseDomain: string;
        appsDir: string;
        nginxSitesDir: string;
        certificatesDir: string;
        /** Archives of deleted apps' data (tar.gz), kept unless a delete removes them. */
        archivesDir: string;
        /** How long a deploy waits for the app's services to become healthy. */
        healthTimeoutSeconds: number;
        /** How long each service must stay up without exiting or restarting before a deploy or start counts it ready. */
        settleSeconds: number;
        /** How long pulling one image may take before it is aborted. */
        pullTimeoutSeconds: number;
        /** What apps' services run on: the Docker engine's containers, or a Docker Swarm's services (DEPLOY_ENGINE). */
        engine: 'compose' | 'swarm';
        /** Host ports (on 127.0.0.1) given to apps' web services, from this one up. */
        firstHostPort: number;
        /** Folders of recipe files besides the project's own `recipes/` (RECIPES_DIRS). */
        recipeDirs: string[];
        /** Folders of auto-login adapter files besides `plugins/sso/autologin/adapters/` (AUTOLOGIN_ADAPTERS_DIRS). */
        autologinAdapterDirs: string[];
        /** Folders of sign-in method files besides `plugins/sso/methods/` (SIGN_IN_METHODS_DIRS). */
        signInMethodDirs: string[];
        /** App-template lists (Portainer's formats) the catalog imports: URLs or files (CATALOG_URLS). */
        catalogUrls: string[];
    };
    /** What the deploy manager drives on this machine: nginx, the ACME CA, the image registry, DNS. */
    host: HostConfig;
    /** The deploy manager's sessions. */
    deploy: {
        sessionHours: number;
        /** How long a run's owner's claim holds without renewal before another process may take the run over. */
        runLeaseSeconds: number;
        /** Containers' resource figures: read every `intervalSeconds`, the last `samples` of each kept in memory. */
        stats: { intervalSeconds: number; samples: number };
        /** Whether each answer is checked against its spec's response schema (GATEHOUSE_CHECK_RESPONSES; the tests do). */
        checkResponses: boolean;
    };
    /** AUTHENTIK_URL and AUTHENTIK_BOOTSTRAP_TOKEN: connect to authentik at first start when nothing is saved yet. */
    idpBootstrap: { url: string | undefined; token: string | undefined };
    /** Folders of identity-provider kinds besides `plugins/idp/providers/` (IDP_KINDS_DIRS). */
    idpKindDirs: string[];
    /** Failed password and code checks, of both services (lib/throttle.ts). */
    signInLimits: ThrottleLimits;
    /** Proxies (CIDRs) whose X-Forwarded-For names the client (TRUSTED_PROXIES). */
    trustedProxies: string[];
    /** Per cron task overrides, keyed by Gitea's task name (`repo_health_check`). */
    cron: Record<string, CronTaskOverride>;
    /** Action logs older than this many days are removed by the `cleanup_actions` cron task. */
    actionsLogRetentionDays: number;
    /** Accounts not activated within this many minutes are removed by the `delete_inactive_accounts` cron task. */
    activeCodeLiveMinutes: number;
    /** Entries per in-memory read cache (token look-ups, user search, organisation, notification and run pages); 0: off. */
    readCacheEntries: number;
    /** Apps' backups: the restic repository (a folder or any restic backend) and its password (unset: a generated one, sealed). */
    backups: {
        repository: string;
        password: string | undefined;
        sftpCommand: string | undefined;
        keep: string | undefined;
        /** When every deployed app is backed up (BACKUP_SCHEDULE, cron; six fields count seconds; daily at 02:30 by default); undefined: `off`, only by hand. */
        schedule: string | undefined;
        /**
         * A backup first in every run that changes a deployed app (BACKUP_BEFORE_CHANGES, default on): a redeploy, a
         * compose, nginx or sign-in change, and a delete that removes data (which then leaves no loose archives).
         */
        beforeChanges: boolean;
    };
    /** Where notification e-mail goes out (SMTP_*); without SMTP_HOST no e-mail is sent. */
    smtp: SmtpConfig;
    /** Administrators' shells in apps' containers (TERMINAL_ENABLED, off by default). */
    terminal: TerminalConfig;
}

export interface TerminalConfig {
    enabled: boolean;
    /** A session with neither input nor output for this long is closed (TERMINAL_IDLE_MINUTES, or TERMINAL_IDLE_SECONDS). */
    idleSeconds: number;
}

export interface SmtpConfig {
    host: string | undefined;
    port: number;
    /** TLS from the first byte (port 465); otherwise STARTTLS when the server offers it. */
    secure: boolean;
    username: string | undefined;
    password: string | undefined;
    from: string;
    timeoutMs: number;
}

export interface HostConfig {
    nginxBin: string | undefined;
    /** The main configuration of the managed nginx (`nginx -c`); unset: nginx's own default. */
    nginxConf: string | undefined;
    /** The ports app sites listen on (80 and 443 unless nginx runs on unprivileged ports). */
    nginxHttpPort: number;
    nginxHttpsPort: number;
    /** The one address app sites listen on (NGINX_LISTEN_ADDRESS); unset: every address. */
    nginxListenAddress: string | undefined;
    /** Where HTTP-01 challenge files are written; every app site serves it under /.well-known/acme-challenge/. */
    acmeWebroot: string;
    acmeDirectoryUrl: string | undefined;
    /** A CA certificate (PEM) to trust for the ACME directory, for a test CA such as pebble. */
    acmeCaFile: string | undefined;
    acmeEmail: string | undefined;
    /** Renew certificates this many days before they expire. */
    acmeRenewDays: number;
    registry: { url: string | undefined; username: string | undefined; password: string | undefined };
    /** Docker Hub's web API (search, tag lists), HUB_URL: a stand-in in tests. */
    hubUrl: string;
    /** Where Docker Hub's images are read (HUB_REGISTRY_URL): its registry, or a pull-through mirror. */
    hubRegistryUrl: string;
    /** Where image look-ups may go besides the URLs above (HUB_ALLOWED_HOST_LIST, as the webhooks' list). */
    hubAllowedHostList: string;
    dns: DnsConfig;
}

export interface DnsConfig {
    /** A DNS provider plugin's name (`rfc2136`); unset: DNS records are not managed. */
    provider: string | undefined;
    /** Folders of provider files besides `plugins/deploy/domain/dns/providers/` (DNS_PROVIDERS_DIRS). */
    providerDirs: string[];
    /** host:port of the authoritative server that takes dynamic updates. */
    server: string | undefined;
    zone: string | undefined;
    tsigKeyName: string | undefined;
    /** Base64 TSIG secret. */
    tsigSecret: string | undefined;
    tsigAlgorithm: string;
    /** The address app names point at (A, or AAAA for an IPv6 address). */
    address: string | undefined;
    ttl: number;
}

export interface CronTaskOverride {
    enabled?: boolean;
    schedule?: string;
    runAtStart?: boolean;
}

/** Gitea's schedule forms: `@midnight`-style descriptors, `@every 72h`, or a cron expression of 5 or 6 fields. */
export const CRON_SCHEDULE_PATTERN =
    /^(@(yearly|annually|monthly|weekly|daily|midnight|hourly)|@every\s+(\d+(ms|s|m|h))+|(\S+\s+){4,5}\S+)$/;
const CRON_VARIABLE = /^CRON_([A-Z0-9_]+?)_(ENABLED|SCHEDULE|RUN_AT_START)$/;

export interface WebhookConfig {
    /** Gitea's ALLOWED_HOST_LIST: `external`, `private`, `loopback`, `*`, host names (globs) and CIDRs. */
    allowedHostList: string;
    deliverTimeoutMs: number;
    maxAttempts: number;
    /** The first retry waits this long; each later one twice as long as the one before. */
    retryBackoffMs: number;
}

const ALLOWED_HOST_ITEM = /^\s*[\w.*:/[\]-]+\s*$/;

/** Gitea's ALLOWED_HOST_LIST syntax, `external` unless set. */
function allowedHostList(): Joi.StringSchema {
    return Joi.string()
        .custom((value: string) => {
            if (!value.split(',').every((item) => ALLOWED_HOST_ITEM.test(item))) {
                throw new Error('invalid');
            }

            parseAllowList(value); // throws on a CIDR it cannot read
            return value;
        })
        .message('a comma-separated list of external, private, loopback, *, host names and CIDRs')
        .default('external');
}

/** Every deployed app is backed up each night unless BACKUP_SCHEDULE says otherwise (or `off`). */
const DAILY_BACKUPS = '30 2 * * *';

/** A cron expression Bree takes (lib/cron.ts): the same check as an app's own backup schedule gets. */
function cronExpression(): Joi.StringSchema {
    return Joi.string()
        .trim()
        .custom((value: string) => {
            if (cronProblem(value)) {
                throw new Error('invalid');
            }

            return value;
        })
        .message(`${CRON_FORM}, or off`);
}

/** Which backups of an app are kept (restic forget's policy): `7 daily, 4 weekly, 6 monthly`, `10 last`... */
const BACKUP_KEEP_PATTERN =
    /^\s*\d+\s+(last|hourly|daily|weekly|monthly|yearly)(\s*,\s*\d+\s+(last|hourly|daily|weekly|monthly|yearly))*\s*$/;

const environmentSchema = Joi.object({
    PORT: Joi.number().integer().min(0).max(65535).default(3000),
    HOST: Joi.string().default('127.0.0.1'),
    PUBLIC_URL: Joi.string().uri({ scheme: ['http', 'https'] }),
    DATA_DIR: Joi.string().default('./data'),
    REPOSITORIES_DIR: Joi.string(),
    PACKAGES_DIR: Joi.string(),
    DATABASE_URL: Joi.string().pattern(/^(sqlite|mysql|mariadb):/, 'sqlite:, mysql: or mariadb: URL'),
    SERVICES: Joi.string()
        .pattern(/^\s*(git|deploy)\s*(,\s*(git|deploy)\s*)?$/, 'git, deploy or git,deploy')
        .default('git,deploy'),
    MASTER_KEY: Joi.string().pattern(/^[0-9a-fA-F]{64}$/, '64 hexadecimal characters (32 bytes)'),
    BASE_DOMAIN: Joi.string().hostname().default('localhost'),
    APPS_DIR: Joi.string(),
    NGINX_SITES_DIR: Joi.string(),
    CERTIFICATES_DIR: Joi.string(),
    ARCHIVES_DIR: Joi.string(),
    DEPLOY_HEALTH_TIMEOUT_SECONDS: Joi.number().integer().min(1).max(3600).default(180),
    DEPLOY_SETTLE_SECONDS: Joi.number().integer().min(0).max(300).default(10),
    DEPLOY_PULL_TIMEOUT_SECONDS: Joi.number().integer().min(1).max(86400).default(600),
    DEPLOY_ENGINE: Joi.string().valid('compose', 'swarm').default('compose'),
    APPS_FIRST_HOST_PORT: Joi.number().integer().min(1024).max(65000).default(20000),
    RECIPES_DIRS: Joi.string().allow('').default(''),
    AUTOLOGIN_ADAPTERS_DIRS: Joi.string().allow('').default(''),
    SIGN_IN_METHODS_DIRS: Joi.string().allow('').default(''),
    CATALOG_URLS: Joi.string().allow('').default(''),
    NGINX_BIN: Joi.string(),
    NGINX_CONF: Joi.string(),
    NGINX_HTTP_PORT: Joi.number().integer().min(1).max(65535).default(80),
    NGINX_HTTPS_PORT: Joi.number().integer().min(1).max(65535).default(443),
    NGINX_LISTEN_ADDRESS: Joi.string().ip({ cidr: 'forbidden' }),
    ACME_WEBROOT: Joi.string(),
    ACME_DIRECTORY_URL: Joi.string().uri({ scheme: ['http', 'https'] }),
    AUTHENTIK_URL: Joi.string().uri({ scheme: ['http', 'https'] }),
    AUTHENTIK_BOOTSTRAP_TOKEN: Joi.string().max(4096),
    IDP_KINDS_DIRS: Joi.string().allow('').default(''),
    GATEHOUSE_CHECK_RESPONSES: Joi.boolean().truthy('1').falsy('0', '').default(false),
    ACME_CA_FILE: Joi.string(),
    ACME_EMAIL: Joi.string().email({ tlds: false }),
    ACME_RENEW_DAYS: Joi.number().integer().min(1).max(89).default(30),
    REGISTRY_URL: Joi.string().pattern(/^[\w.-]+(:\d+)?(\/[\w./-]*)?$/, 'host[:port][/path]'),
    REGISTRY_USERNAME: Joi.string(),
    REGISTRY_PASSWORD: Joi.string(),
    HUB_URL: Joi.string()
        .uri({ scheme: ['http', 'https'] })
        .default('https://hub.docker.com'),
    HUB_REGISTRY_URL: Joi.string()
        .uri({ scheme: ['http', 'https'] })
        .default('https://registry-1.docker.io'),
    HUB_ALLOWED_HOST_LIST: allowedHostList(),
    DNS_PROVIDER: Joi.string().pattern(/^[a-z0-9-]+$/, 'a provider plugin name'),
    DNS_PROVIDERS_DIRS: Joi.string().allow('').default(''),
    DNS_SERVER: Joi.string().pattern(/^[\w.:[\]-]+$/, 'host or host:port'),
    DNS_ZONE: Joi.string().hostname(),
    DNS_TSIG_KEY_NAME: Joi.string(),
    DNS_TSIG_SECRET: Joi.string().base64(),
    DNS_TSIG_ALGORITHM: Joi.string().valid('hmac-sha256', 'hmac-sha512', 'hmac-sha1').default('hmac-sha256'),
    DNS_ADDRESS: Joi.string().ip({ cidr: 'forbidden' }),
    DNS_TTL: Joi.number().integer().min(1).max(86400).default(300),
    DEPLOY_SESSION_HOURS: Joi.number()
        .positive()
        .max(24 * 90)
        .default(12),
    RUN_LEASE_SECONDS: Joi.number().integer().min(2).max(600).default(30),
    STATS_INTERVAL_SECONDS: Joi.number().integer().min(1).max(600).default(10),
    STATS_SAMPLES: Joi.number().integer().min(2).max(10_000).default(360),
    LOGIN_WINDOW_SECONDS: Joi.number().integer().min(1).default(900),
    LOGIN_MAX_FAILURES: Joi.number().integer().min(1).default(5),
    LOGIN_MAX_FAILURES_PER_ACCOUNT: Joi.number().integer().min(1).default(10),
    LOGIN_MAX_FAILURES_PER_ADDRESS: Joi.number().integer().min(1).default(20),
    LOGIN_BACKOFF_SECONDS: Joi.number().integer().min(1).default(1),
    TRUSTED_PROXIES: Joi.string()
        .allow('')
        .custom((value: string) => {
            parseTrustedProxies(value);
            return value;
        })
        .default(''),
    WEBHOOK_ALLOWED_HOST_LIST: allowedHostList(),
    WEBHOOK_DELIVER_TIMEOUT: Joi.number().integer().min(1).max(600).default(5),
    WEBHOOK_MAX_ATTEMPTS: Joi.number().integer().min(1).max(100).default(5),
    WEBHOOK_RETRY_BACKOFF_MS: Joi.number().integer().min(1).max(86_400_000).default(10_000),
    LOG_LEVEL: Joi.string().valid('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent').default('info'),
    ACTIONS_LOG_RETENTION_DAYS: Joi.number().integer().min(1).default(365),
    ACTIVE_CODE_LIVE_MINUTES: Joi.number().integer().min(1).default(180),
    READ_CACHE_ENTRIES: Joi.number().integer().min(0).max(100_000).default(256),
    BACKUP_REPOSITORY: Joi.string().max(1024),
    BACKUP_PASSWORD: Joi.string().min(8).max(1024),
    BACKUP_SFTP_COMMAND: Joi.string().max(4096),
    BACKUP_KEEP: Joi.string().pattern(BACKUP_KEEP_PATTERN, 'a list such as "7 daily, 4 weekly, 6 monthly"'),
    BACKUP_SCHEDULE: Joi.alternatives().try(Joi.string().valid('off'), cronExpression()).default(DAILY_BACKUPS),
    BACKUP_BEFORE_CHANGES: Joi.boolean().truthy('1').falsy('0').default(true),
    SMTP_HOST: Joi.string().hostname(),
    SMTP_PORT: Joi.number().integer().min(1).max(65535).default(587),
    SMTP_SECURE: Joi.boolean().truthy('1').falsy('0').default(false),
    SMTP_USERNAME: Joi.string().max(255),
    SMTP_PASSWORD: Joi.string().max(1024),
    SMTP_FROM: Joi.string().email({ tlds: false }).max(254),
    SMTP_TIMEOUT_SECONDS: Joi.number().integer().min(1).max(600).default(30),
    TERMINAL_ENABLED: Joi.boolean().truthy('1').falsy('0').default(false),
    TERMINAL_IDLE_MINUTES: Joi.number().integer().min(1).max(1440).default(15),
    TERMINAL_IDLE_SECONDS: Joi.number()
        .integer()
        .min(1)
        .max(24 * 3600),
})
    .pattern(/^CRON_[A-Z0-9_]+_(ENABLED|RUN_AT_START)$/, Joi.boolean().truthy('1').falsy('0'))
    .pattern(
        /^CRON_[A-Z0-9_]+_SCHEDULE$/,
        Joi.string().trim().pattern(CRON_SCHEDULE_PATTERN, '@descriptor, @every <duration> or cron expression'),
    )
    .unknown(true);

export class ConfigError extends Error {}

/** Reads the configuration from the environment; throws ConfigError naming every bad variable. */
export function loadConfig(environment: NodeJS.ProcessEnv = process.env): Config {
    const { value, error } = environmentSchema.validate(environment, { abortEarly: false, convert: true });
    if (error) {
        const lines = error.details.map((detail) => `  ${detail.path.join('.')}: ${detail.message}`);
        throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
    }

    const dataDir = Path.resolve(value.DATA_DIR as string);
    const port = value.PORT as number;
    const host = value.HOST as string;
    const services = [...new Set((value.SERVICES as string).split(',').map((name) => name.trim()))] as ServiceName[];
    const publicUrl = ((value.PUBLIC_URL as string | undefined) ?? `http://${urlHost(host)}:${port}`).replace(/\/*$/, '/');

    return {
        port,
        listenHost: host,
        publicUrl,
        dataDir,
        repositoriesDir: Path.resolve((value.REPOSITORIES_DIR as string | undefined) ?? Path.join(dataDir, 'repositories')),
        packagesDir: Path.resolve((value.PACKAGES_DIR as string | undefined) ?? Path.join(dataDir, 'packages')),
        databaseUrl: (value.DATABASE_URL as string | undefined) ?? `sqlite:${Path.join(dataDir, 'gatehouse.sqlite')}`,
        services,
        masterKey: value.MASTER_KEY as string | undefined,
        logLevel: value.LOG_LEVEL as string,
        webhooks: {
            allowedHostList: value.WEBHOOK_ALLOWED_HOST_LIST as string,
            deliverTimeoutMs: (value.WEBHOOK_DELIVER_TIMEOUT as number) * 1000,
            maxAttempts: value.WEBHOOK_MAX_ATTEMPTS as number,
            retryBackoffMs: value.WEBHOOK_RETRY_BACKOFF_MS as number,
        },
        apps: {
            baseDomain: value.BASE_DOMAIN as string,
            appsDir: Path.resolve((value.APPS_DIR as string | undefined) ?? Path.join(dataDir, 'apps')),
            nginxSitesDir: Path.resolve((value.NGINX_SITES_DIR as string | undefined) ?? Path.join(dataDir, 'nginx', 'sites')),
            certificatesDir: Path.resolve((value.CERTIFICATES_DIR as string | undefined) ?? Path.join(dataDir, 'certificates')),
            archivesDir: Path.resolve((value.ARCHIVES_DIR as string | undefined) ?? Path.join(dataDir, 'archives')),
            healthTimeoutSeconds: value.DEPLOY_HEALTH_TIMEOUT_SECONDS as number,
            settleSeconds: value.DEPLOY_SETTLE_SECONDS as number,
            pullTimeoutSeconds: value.DEPLOY_PULL_TIMEOUT_SECONDS as number,
            engine: value.DEPLOY_ENGINE as 'compose' | 'swarm',
            firstHostPort: value.APPS_FIRST_HOST_PORT as number,
            recipeDirs: listOf(value.RECIPES_DIRS as string).map((folder) => Path.resolve(folder)),
            autologinAdapterDirs: listOf(value.AUTOLOGIN_ADAPTERS_DIRS as string).map((folder) => Path.resolve(folder)),
            signInMethodDirs: listOf(value.SIGN_IN_METHODS_DIRS as string).map((folder) => Path.resolve(folder)),
            catalogUrls: listOf(value.CATALOG_URLS as string),
        },
        host: {
            nginxBin: value.NGINX_BIN as string | undefined,
            nginxConf: optionalPath(value.NGINX_CONF),
            nginxHttpPort: value.NGINX_HTTP_PORT as number,
            nginxHttpsPort: value.NGINX_HTTPS_PORT as number,
            nginxListenAddress: value.NGINX_LISTEN_ADDRESS as string | undefined,
            acmeWebroot: Path.resolve((value.ACME_WEBROOT as string | undefined) ?? Path.join(dataDir, 'acme')),
            acmeDirectoryUrl: value.ACME_DIRECTORY_URL as string | undefined,
            acmeCaFile: optionalPath(value.ACME_CA_FILE),
            acmeEmail: value.ACME_EMAIL as string | undefined,
            acmeRenewDays: value.ACME_RENEW_DAYS as number,
            registry: {
                url: value.REGISTRY_URL as string | undefined,
                username: value.REGISTRY_USERNAME as string | undefined,
                password: value.REGISTRY_PASSWORD as string | undefined,
            },
            hubUrl: (value.HUB_URL as string).replace(/\/+$/, ''),
            hubRegistryUrl: (value.HUB_REGISTRY_URL as string).replace(/\/+$/, ''),
            hubAllowedHostList: value.HUB_ALLOWED_HOST_LIST as string,
            dns: {
                provider: value.DNS_PROVIDER as string | undefined,
                providerDirs: listOf(value.DNS_PROVIDERS_DIRS as string).map((folder) => Path.resolve(folder)),
                server: value.DNS_SERVER as string | undefined,
                zone: value.DNS_ZONE as string | undefined,
                tsigKeyName: value.DNS_TSIG_KEY_NAME as string | undefined,
                tsigSecret: value.DNS_TSIG_SECRET as string | undefined,
                tsigAlgorithm: value.DNS_TSIG_ALGORITHM as string,
                address: value.DNS_ADDRESS as string | undefined,
                ttl: value.DNS_TTL as number,
            },
        },
        deploy: {
            sessionHours: value.DEPLOY_SESSION_HOURS as number,
            runLeaseSeconds: value.RUN_LEASE_SECONDS as number,
            stats: { intervalSeconds: value.STATS_INTERVAL_SECONDS as number, samples: value.STATS_SAMPLES as number },
            checkResponses: value.GATEHOUSE_CHECK_RESPONSES as boolean,
        },
        idpBootstrap: {
            url: value.AUTHENTIK_URL as string | undefined,
            token: value.AUTHENTIK_BOOTSTRAP_TOKEN as string | undefined,
        },
        idpKindDirs: listOf(value.IDP_KINDS_DIRS as string).map((folder) => Path.resolve(folder)),
        signInLimits: {
            windowSeconds: value.LOGIN_WINDOW_SECONDS as number,
            maxFailures: value.LOGIN_MAX_FAILURES as number,
            maxFailuresPerAccount: value.LOGIN_MAX_FAILURES_PER_ACCOUNT as number,
            maxFailuresPerAddress: value.LOGIN_MAX_FAILURES_PER_ADDRESS as number,
            backoffSeconds: value.LOGIN_BACKOFF_SECONDS as number,
        },
        trustedProxies: parseTrustedProxies(value.TRUSTED_PROXIES as string),
        cron: cronOverrides(value as Record<string, unknown>),
        actionsLogRetentionDays: value.ACTIONS_LOG_RETENTION_DAYS as number,
        activeCodeLiveMinutes: value.ACTIVE_CODE_LIVE_MINUTES as number,
        readCacheEntries: value.READ_CACHE_ENTRIES as number,
        backups: {
            repository: (value.BACKUP_REPOSITORY as string | undefined) ?? Path.join(dataDir, 'backups'),
            password: value.BACKUP_PASSWORD as string | undefined,
            sftpCommand: value.BACKUP_SFTP_COMMAND as string | undefined,
            keep: value.BACKUP_KEEP as string | undefined,
            schedule: value.BACKUP_SCHEDULE === 'off' ? undefined : (value.BACKUP_SCHEDULE as string),
            beforeChanges: value.BACKUP_BEFORE_CHANGES as boolean,
        },
        smtp: {
            host: value.SMTP_HOST as string | undefined,
            port: value.SMTP_PORT as number,
            secure: value.SMTP_SECURE as boolean,
            username: value.SMTP_USERNAME as string | undefined,
            password: value.SMTP_PASSWORD as string | undefined,
            from: (value.SMTP_FROM as string | undefined) ?? `gatehouse@${new URL(publicUrl).hostname}`,
            timeoutMs: (value.SMTP_TIMEOUT_SECONDS as number) * 1000,
        },
        terminal: {
            enabled: value.TERMINAL_ENABLED as boolean,
            idleSeconds: (value.TERMINAL_IDLE_SECONDS as number | undefined) ?? (value.TERMINAL_IDLE_MINUTES as number) * 60,
        },
    };
}

/** A comma-separated list, blanks dropped. */
function listOf(text: string): string[] {
    return text
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item !== '');
}

/** `CRON_REPO_HEALTH_CHECK_ENABLED=false` → `{repo_health_check: {enabled: false}}`. */
function cronOverrides(values: Record<string, unknown>): Record<string, CronTaskOverride> {
    const overrides: Record<string, CronTaskOverride> = {};
    for (const [name, value] of Object.entries(values)) {
        const match = CRON_VARIABLE.exec(name);
        if (!match?.[1] || value === undefined) {
            continue;
        }

        const override = (overrides[match[1].toLowerCase()] ??= {});
        if (match[2] === 'SCHEDULE') {
            override.schedule = value as string;
        } else if (match[2] === 'ENABLED') {
            override.enabled = value as boolean;
        } else {
            override.runAtStart = value as boolean;
        }
    }

    return overrides;
}

function optionalPath(value: unknown): string | undefined {
    return typeof value === 'string' ? Path.resolve(value) : undefined;
}

function urlHost(host: string): string {
    if (host === '0.0.0.0' || host === '::') {
        return 'localhost';
    }

    return host.includes(':') ? `[${host}]` : host;
}
