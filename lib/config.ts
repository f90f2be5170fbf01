import Path from 'node:path';

import Joi from 'joi';

export type ServiceName = 'git' | 'deploy';

export interface Config {
    port: number;
    host: string;
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
        /** Host ports (on 127.0.0.1) given to apps' web services, from this one up. */
        firstHostPort: number;
    };
    /** The deploy manager's sign-in: session lifetime and failed-attempt limits (per account and per address). */
    deploy: {
        sessionHours: number;
        loginWindowSeconds: number;
        maxFailuresPerAccount: number;
        maxFailuresPerAddress: number;
    };
    /** Per cron task overrides, keyed by Gitea's task name (`repo_health_check`). */
    cron: Record<string, CronTaskOverride>;
    /** Action logs older than this many days are removed by the `cleanup_actions` cron task. */
    actionsLogRetentionDays: number;
    /** Accounts not activated within this many minutes are removed by the `delete_inactive_accounts` cron task. */
    activeCodeLiveMinutes: number;
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
    APPS_FIRST_HOST_PORT: Joi.number().integer().min(1024).max(65000).default(20000),
    DEPLOY_SESSION_HOURS: Joi.number()
        .positive()
        .max(24 * 90)
        .default(12),
    LOGIN_WINDOW_SECONDS: Joi.number().integer().min(1).default(900),
    LOGIN_MAX_FAILURES_PER_ACCOUNT: Joi.number().integer().min(1).default(5),
    LOGIN_MAX_FAILURES_PER_ADDRESS: Joi.number().integer().min(1).default(20),
    WEBHOOK_ALLOWED_HOST_LIST: Joi.string()
        .custom((value: string) => {
            if (!value.split(',').every((item) => ALLOWED_HOST_ITEM.test(item))) {
                throw new Error('invalid');
            }

            return value;
        })
        .message('a comma-separated list of external, private, loopback, *, host names and CIDRs')
        .default('external'),
    WEBHOOK_DELIVER_TIMEOUT: Joi.number().integer().min(1).max(600).default(5),
    WEBHOOK_MAX_ATTEMPTS: Joi.number().integer().min(1).max(100).default(5),
    WEBHOOK_RETRY_BACKOFF_MS: Joi.number().integer().min(1).max(86_400_000).default(10_000),
    LOG_LEVEL: Joi.string().valid('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent').default('info'),
    ACTIONS_LOG_RETENTION_DAYS: Joi.number().integer().min(1).default(365),
    ACTIVE_CODE_LIVE_MINUTES: Joi.number().integer().min(1).default(180),
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
        host,
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
            firstHostPort: value.APPS_FIRST_HOST_PORT as number,
        },
        deploy: {
            sessionHours: value.DEPLOY_SESSION_HOURS as number,
            loginWindowSeconds: value.LOGIN_WINDOW_SECONDS as number,
            maxFailuresPerAccount: value.LOGIN_MAX_FAILURES_PER_ACCOUNT as number,
            maxFailuresPerAddress: value.LOGIN_MAX_FAILURES_PER_ADDRESS as number,
        },
        cron: cronOverrides(value as Record<string, unknown>),
        actionsLogRetentionDays: value.ACTIONS_LOG_RETENTION_DAYS as number,
        activeCodeLiveMinutes: value.ACTIVE_CODE_LIVE_MINUTES as number,
    };
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

function urlHost(host: string): string {
    if (host === '0.0.0.0' || host === '::') {
        return 'localhost';
    }

    return host.includes(':') ? `[${host}]` : host;
}
