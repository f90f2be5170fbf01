/**
 * The compose model's types: a typed view of a docker-compose file. They import nothing, so that every module of
 * the model can use them without importing the entry points in compose-model.ts.
 */

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
