/**
 * The compose model: a typed view of a docker-compose file covering what self-hosted apps use, parsed from
 * and rendered to YAML without loss. What the model does not cover is kept verbatim in `extra`.
 */
import type { Finding } from '../findings/finding.ts';
import { checkConfiguration } from './compose-checks.ts';
import type { LintContext } from './compose-host-paths.ts';
import { lintSpec } from './compose-lint.ts';
import { plainFromModel } from './compose-read.ts';
import { schemaFindings } from './compose-schema.ts';
import { writeComposeText } from './compose-yaml.ts';

/** A scalar as compose files write them in maps of options. */
export type ComposeScalar = string | number | boolean | null;

/** Nested objects keep keys the model does not name (x- extensions, newer options) as they were. */
export interface Extensible {
    [key: string]: unknown;
}

export interface ComposePortLong extends Extensible {
    target: number;
    published?: string | number;
    host_ip?: string;
    protocol?: string;
    mode?: string;
}

/** Short syntax (`"127.0.0.1:8080:80/tcp"` or `80`) or long syntax. */
export type ComposePort = string | number | ComposePortLong;

export interface ComposeVolumeLong extends Extensible {
    type: string;
    source?: string;
    target: string;
    read_only?: boolean;
    bind?: Extensible;
    volume?: Extensible;
    tmpfs?: Extensible;
}

/** Short syntax (`"./data:/var/lib/data:ro"`) or long syntax. */
export type ComposeServiceVolume = string | ComposeVolumeLong;

export interface ComposeDependency extends Extensible {
    condition: 'service_started' | 'service_healthy' | 'service_completed_successfully';
    required?: boolean;
    restart?: boolean;
}

export interface ComposeServiceNetwork extends Extensible {
    aliases?: string[];
    ipv4_address?: string;
    ipv6_address?: string;
}

export interface ComposeHealthcheck extends Extensible {
    test?: string | string[];
    interval?: string;
    timeout?: string;
    retries?: number;
    start_period?: string;
    start_interval?: string;
    disable?: boolean;
}

export interface ComposeLogging extends Extensible {
    driver?: string;
    options?: Record<string, ComposeScalar>;
}

export interface ComposeDevice extends Extensible {
    source: string;
    target?: string;
    permissions?: string;
}

export interface ComposeEnvFile extends Extensible {
    path: string;
    required?: boolean;
}

export interface ComposeService {
    image?: string;
    command?: string | string[];
    entrypoint?: string | string[];
    /** Always a map; `null` is a name without a value (`- NAME`), taken from the shell at deploy time. */
    environment?: Record<string, string | null>;
    /** How the file wrote `environment`, so that rendering gives the same form back. */
    environmentForm?: 'map' | 'list';
    env_file?: string | Array<string | ComposeEnvFile>;
    ports?: ComposePort[];
    volumes?: ComposeServiceVolume[];
    networks?: string[] | Record<string, ComposeServiceNetwork | null>;
    depends_on?: string[] | Record<string, ComposeDependency>;
    healthcheck?: ComposeHealthcheck;
    restart?: string;
    labels?: Record<string, string> | string[];
    user?: string;
    cap_add?: string[];
    devices?: Array<string | ComposeDevice>;
    logging?: ComposeLogging;
    container_name?: string;
    working_dir?: string;
    expose?: Array<string | number>;
    extra_hosts?: string[] | Record<string, string>;
    privileged?: boolean;
    network_mode?: string;
    pid?: string;
    /** Every other service key (build, deploy, profiles, secrets, x-...), verbatim. */
    extra?: Record<string, unknown>;
}

export interface ComposeVolume extends Extensible {
    driver?: string;
    driver_opts?: Record<string, string | number>;
    // The object form (`{name}`) is the legacy way to name an external one.
    external?: boolean | { name?: string };
    name?: string;
    labels?: Record<string, string> | string[];
}

export interface ComposeNetwork extends Extensible {
    driver?: string;
    driver_opts?: Record<string, string | number>;
    // The object form (`{name}`) is the legacy way to name an external one.
    external?: boolean | { name?: string };
    internal?: boolean;
    name?: string;
    ipam?: Extensible;
    labels?: Record<string, string> | string[];
}

export interface ComposeSpec {
    services: Record<string, ComposeService>;
    volumes?: Record<string, ComposeVolume | null>;
    networks?: Record<string, ComposeNetwork | null>;
    /** Every other top-level key (name, version, secrets, configs, x-...), verbatim. */
    extra?: Record<string, unknown>;
}

export interface ValidateOptions {
    /** The app's secrets file: the values `${VAR}` interpolates. */
    secrets?: Record<string, string>;
    /** Probe each published host port on 127.0.0.1 (default true). */
    checkHostPorts?: boolean;
}

export { parseCompose } from './compose-parse.ts';

/** Renders the model as compose YAML; parsing the text gives the same model back. */
export function renderCompose(spec: ComposeSpec): string {
    return writeComposeText(plainFromModel(spec));
}

/** Errors that would stop a deploy: the Compose schema, `${VAR}`s without a value, busy host ports, unknown images. */
export async function validateCompose(spec: ComposeSpec, options: ValidateOptions = {}): Promise<Finding[]> {
    const schema = schemaFindings(plainFromModel(spec));
    const configuration = await checkConfiguration(spec, {
        secrets: options.secrets ?? {},
        checkHostPorts: options.checkHostPorts ?? true,
    });
    return [...schema, ...configuration];
}

export { type LintContext, lintContextFor } from './compose-host-paths.ts';

/**
 * Risks (need acceptRisks to deploy), warnings and information about how the services are set up. Host paths
 * are judged where the deploy will find them: after `${VAR}`s take the context's values, against its app folder.
 */
export function lintCompose(spec: ComposeSpec, context: LintContext): Finding[] {
    return lintSpec(spec, context);
}

export function hasUnacceptedRisks(findings: Finding[]): boolean {
    return findings.some((finding) => finding.level === 'risk');
}
