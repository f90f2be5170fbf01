import type {
    ComposeDependency,
    ComposeDevice,
    ComposeEnvFile,
    ComposeHealthcheck,
    ComposeLogging,
    ComposeNetwork,
    ComposePort,
    ComposePortLong,
    ComposeService,
    ComposeServiceNetwork,
    ComposeServiceVolume,
    ComposeSpec,
    ComposeVolume,
    ComposeVolumeLong,
} from './compose-types.ts';
import type { LineOf } from './compose-path.ts';
import { checkNesting } from './compose-yaml.ts';
import { isPlainObject, type Path, type ShapeProblem, ShapeReader } from './shape-reader.ts';

type TypedServiceKey = Exclude<keyof ComposeService, 'environmentForm' | 'extra'>;
type ServiceReaders = { [Key in TypedServiceKey]-?: (value: unknown, path: Path) => ComposeService[Key] };

const CONDITIONS = ['service_started', 'service_healthy', 'service_completed_successfully'];

/** The order services are rendered in; keys the model does not cover follow, as they came. */
const SERVICE_KEYS: readonly TypedServiceKey[] = [
    'image',
    'container_name',
    'command',
    'entrypoint',
    'user',
    'working_dir',
    'restart',
    'environment',
    'env_file',
    'ports',
    'expose',
    'volumes',
    'networks',
    'network_mode',
    'pid',
    'depends_on',
    'healthcheck',
    'labels',
    'cap_add',
    'devices',
    'privileged',
    'extra_hosts',
    'logging',
];

/** Top-level keys rendered before `services`; the other keys the model does not cover come after `volumes`. */
const LEADING_TOP_KEYS = ['version', 'name', 'include'];

function serviceReaders(read: ShapeReader): ServiceReaders {
    const string = (value: unknown, path: Path) => read.string(value, path);
    const stringOrList = (value: unknown, path: Path) => read.stringOrList(value, path);
    return {
        image: string,
        command: stringOrList,
        entrypoint: stringOrList,
        environment: (value, path) => readEnvironment(read, value, path).environment,
        env_file: (value, path) => readEnvFile(read, value, path),
        ports: (value, path) => read.items(value, path, (item, at) => readPort(read, item, at)),
        volumes: (value, path) => read.items(value, path, (item, at) => readServiceVolume(read, item, at)),
        networks: (value, path) => readServiceNetworks(read, value, path),
        depends_on: (value, path) => readDependsOn(read, value, path),
        healthcheck: (value, path) => readHealthcheck(read, value, path),
        restart: string,
        labels: (value, path) => (Array.isArray(value) ? read.stringList(value, path) : read.textMap(value, path)),
        user: string,
        cap_add: (value, path) => read.stringList(value, path),
        devices: (value, path) => read.items(value, path, (item, at) => readDevice(read, item, at)),
        logging: (value, path) => readLogging(read, value, path),
        container_name: string,
        working_dir: string,
        expose: (value, path) => read.items(value, path, (item, at) => readExposed(read, item, at)),
        extra_hosts: (value, path) => (Array.isArray(value) ? read.stringList(value, path) : read.textMap(value, path)),
        privileged: (value, path) => read.boolean(value, path),
        network_mode: string,
        pid: string,
    };
}

export function readEnvironment(
    read: ShapeReader,
    value: unknown,
    path: Path,
): { environment: Record<string, string | null>; form: 'map' | 'list' } {
    if (Array.isArray(value)) {
        const environment: Record<string, string | null> = {};
        read.stringList(value, path).forEach((entry) => {
            const equals = entry.indexOf('=');
            if (equals < 0) {
                environment[entry] = null;
            } else {
                environment[entry.slice(0, equals)] = entry.slice(equals + 1);
            }
        });
        return { environment, form: 'list' };
    }

    if (!isPlainObject(value)) {
        read.fail(path, 'must be a mapping or a list of NAME=value');
    }

    const environment = read.entries(value, path, (item, at) => {
        const scalar = read.scalar(item, at);
        return scalar === null ? null : String(scalar);
    });
    return { environment, form: 'map' };
}

function readEnvFile(read: ShapeReader, value: unknown, path: Path): string | Array<string | ComposeEnvFile> {
    if (typeof value === 'string') {
        return value;
    }

    return read.items(value, path, (item, at) =>
        typeof item === 'string'
            ? item
            : read.fields<ComposeEnvFile>(item, at, {
                  path: (field, fieldAt) => read.string(field, fieldAt),
                  required: (field, fieldAt) => read.boolean(field, fieldAt),
              }),
    );
}

function readPort(read: ShapeReader, value: unknown, path: Path): ComposePort {
    if (typeof value === 'string' || typeof value === 'number') {
        return value;
    }

    if (!isPlainObject(value)) {
        read.fail(path, 'must be a port ("127.0.0.1:8080:80" or 80) or a mapping (target, published, ...)');
    }

    return read.fields<ComposePortLong>(
        value,
        path,
        {
            target: (field, at) => read.number(field, at),
            published: (field, at) => (typeof field === 'number' ? field : read.string(field, at)),
            host_ip: (field, at) => read.string(field, at),
            protocol: (field, at) => read.string(field, at),
            mode: (field, at) => read.string(field, at),
        },
        { target: 'is required (the container port)' },
    );
}

function readServiceVolume(read: ShapeReader, value: unknown, path: Path): ComposeServiceVolume {
    if (typeof value === 'string') {
        return value;
    }

    if (!isPlainObject(value)) {
        read.fail(path, 'must be a mount ("./data:/data") or a mapping (type, source, target, ...)');
    }

    return read.fields<ComposeVolumeLong>(
        value,
        path,
        {
            type: (field, at) => read.string(field, at),
            source: (field, at) => read.string(field, at),
            target: (field, at) => read.string(field, at),
            read_only: (field, at) => read.boolean(field, at),
            bind: (field, at) => read.object(field, at),
            volume: (field, at) => read.object(field, at),
            tmpfs: (field, at) => read.object(field, at),
        },
        { type: 'is required (volume, bind, tmpfs, ...)', target: 'is required (the path in the container)' },
    );
}

function readServiceNetworks(read: ShapeReader, value: unknown, path: Path): ComposeService['networks'] {
    if (Array.isArray(value)) {
        return read.stringList(value, path);
    }

    return read.entries(value, path, (item, at) =>
        item === null
            ? null
            : read.fields<ComposeServiceNetwork>(item, at, {
                  aliases: (field, fieldAt) => read.stringList(field, fieldAt),
                  ipv4_address: (field, fieldAt) => read.string(field, fieldAt),
                  ipv6_address: (field, fieldAt) => read.string(field, fieldAt),
              }),
    );
}

function readDependsOn(read: ShapeReader, value: unknown, path: Path): ComposeService['depends_on'] {
    if (Array.isArray(value)) {
        return read.stringList(value, path);
    }

    return read.entries(value, path, (item, at) =>
        read.fields<ComposeDependency>(
            item,
            at,
            {
                condition: (field, fieldAt) => readCondition(read, field, fieldAt),
                required: (field, fieldAt) => read.boolean(field, fieldAt),
                restart: (field, fieldAt) => read.boolean(field, fieldAt),
            },
            { condition: `is required: ${CONDITIONS.join(', ')}` },
        ),
    );
}

function readCondition(read: ShapeReader, value: unknown, path: Path): ComposeDependency['condition'] {
    const condition = read.string(value, path);
    if (!CONDITIONS.includes(condition)) {
        read.fail(path, `must be one of ${CONDITIONS.join(', ')}`);
    }

    return condition as ComposeDependency['condition'];
}

function readHealthcheck(read: ShapeReader, value: unknown, path: Path): ComposeHealthcheck {
    const duration = (field: unknown, at: Path) => read.string(field, at);
    return read.fields<ComposeHealthcheck>(value, path, {
        test: (field, at) => read.stringOrList(field, at),
        interval: duration,
        timeout: duration,
        start_period: duration,
        start_interval: duration,
        retries: (field, at) => read.number(field, at),
        disable: (field, at) => read.boolean(field, at),
    });
}

function readLogging(read: ShapeReader, value: unknown, path: Path): ComposeLogging {
    return read.fields<ComposeLogging>(value, path, {
        driver: (field, at) => read.string(field, at),
        options: (field, at) => read.entries(field, at, (option, optionAt) => read.scalar(option, optionAt)),
    });
}

function readDevice(read: ShapeReader, value: unknown, path: Path): string | ComposeDevice {
    if (typeof value === 'string') {
        return value;
    }

    return read.fields<ComposeDevice>(
        value,
        path,
        {
            source: (field, at) => read.string(field, at),
            target: (field, at) => read.string(field, at),
            permissions: (field, at) => read.string(field, at),
        },
        { source: 'is required (the device on the host)' },
    );
}

function readExposed(read: ShapeReader, value: unknown, path: Path): string | number {
    return typeof value === 'number' ? value : read.string(value, path);
}

/** Each key is read on its own, so that a mistake in one leaves the others to be checked. */
function readService(read: ShapeReader, value: unknown, path: Path): ComposeService {
    const raw = read.object(value, path);
    const readers = serviceReaders(read);
    const service: ComposeService = {};
    const extra: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(raw)) {
        if (key === 'environment') {
            const environment = read.attempt(() => readEnvironment(read, item, [...path, key]));
            if (environment !== undefined) {
                Object.assign(service, { environment: environment.environment, environmentForm: environment.form });
            }
        } else if (key in readers) {
            const reader = readers[key as TypedServiceKey] as (value: unknown, path: Path) => unknown;
            const field = read.attempt(() => reader(item, [...path, key]));
            if (field !== undefined) {
                Object.assign(service, { [key]: field });
            }
        } else {
            extra[key] = item;
        }
    }

    if (Object.keys(extra).length > 0) {
        service.extra = extra;
    }

    return service;
}

function readTopLevelObjects<T extends object>(read: ShapeReader, value: unknown, path: Path): Record<string, T | null> {
    return read.entries(value, path, (item, at) =>
        item === null
            ? null
            : read.fields<T>(item, at, {
                  driver: (field, fieldAt) => read.string(field, fieldAt),
                  name: (field, fieldAt) => read.string(field, fieldAt),
                  driver_opts: (field, fieldAt) => read.object(field, fieldAt),
              }),
    );
}

/** Compose data read into the model: the data as read, and the model, which is whole only when there are no problems. */
export interface ModelReading {
    plain: Record<string, unknown>;
    spec: ComposeSpec;
    problems: ShapeProblem[];
}

/** Turns plain compose data (from YAML) into the model; the first mistake in a type is a ValidationError naming its path. */
export function modelFromPlain(plain: Record<string, unknown>, lineOf?: LineOf): ComposeSpec {
    const read = new ShapeReader(lineOf);
    return read.strictly(() => readSpec(read, plain));
}

/** Reads plain compose data (from YAML) into the model, finding every mistake in the types of what the model covers. */
export function readModel(plain: Record<string, unknown>, lineOf?: LineOf): ModelReading {
    const read = new ShapeReader(lineOf);
    const spec = read.attempt(() => readSpec(read, plain)) ?? { services: {} };
    return { plain, spec, problems: read.problems };
}

function readSpec(read: ShapeReader, plain: Record<string, unknown>): ComposeSpec {
    if (plain.services === undefined) {
        read.fail(['services'], 'is required: a compose file needs at least one service');
    }

    const services = read.entries(plain.services, ['services'], (service, at) => readService(read, service, at));
    const spec: ComposeSpec = { services };
    if (plain.volumes !== undefined) {
        const volumes = read.attempt(() => readTopLevelObjects<ComposeVolume>(read, plain.volumes, ['volumes']));
        Object.assign(spec, volumes && { volumes });
    }

    if (plain.networks !== undefined) {
        const networks = read.attempt(() => readTopLevelObjects<ComposeNetwork>(read, plain.networks, ['networks']));
        Object.assign(spec, networks && { networks });
    }

    const extra = Object.fromEntries(Object.entries(plain).filter(([key]) => !['services', 'volumes', 'networks'].includes(key)));
    if (Object.keys(extra).length > 0) {
        spec.extra = extra;
    }

    return spec;
}

function plainEnvironment(service: ComposeService): Record<string, string | null> | string[] | undefined {
    const environment = service.environment;
    if (environment === undefined || service.environmentForm !== 'list') {
        return environment;
    }

    return Object.entries(environment).map(([name, value]) => (value === null ? name : `${name}=${value}`));
}

function plainService(service: ComposeService): Record<string, unknown> {
    const plain: Record<string, unknown> = {};
    for (const key of SERVICE_KEYS) {
        const value = key === 'environment' ? plainEnvironment(service) : service[key];
        if (value !== undefined) {
            plain[key] = value;
        }
    }

    return { ...plain, ...service.extra };
}

/** The model as plain compose data, in a stable key order: what is rendered and what the schema checks. */
export function plainFromModel(spec: ComposeSpec): Record<string, unknown> {
    const extra = spec.extra ?? {};
    const leading = Object.entries(extra).filter(([key]) => LEADING_TOP_KEYS.includes(key) || key.startsWith('x-'));
    const trailing = Object.entries(extra).filter(([key]) => !LEADING_TOP_KEYS.includes(key) && !key.startsWith('x-'));
    const services = Object.fromEntries(Object.entries(spec.services).map(([name, service]) => [name, plainService(service)]));
    return {
        ...Object.fromEntries(leading),
        services,
        ...(spec.networks === undefined ? {} : { networks: spec.networks }),
        ...(spec.volumes === undefined ? {} : { volumes: spec.volumes }),
        ...Object.fromEntries(trailing),
    };
}

/**
 * Checks a model that came as JSON (the API's `spec`): its loose parts are turned back into compose data and
 * read again, so that a malformed model is refused with the path of the mistake, and a good one comes back equal.
 */
export function modelFromJson(value: unknown): ComposeSpec {
    checkNesting(value, 'the model');
    const read = new ShapeReader();
    return read.strictly(() => readSpec(read, plainFromJson(read, value)));
}

/** Reads a model that came as JSON as modelFromJson does, finding every mistake in it. */
export function readModelJson(value: unknown): ModelReading {
    checkNesting(value, 'the model');
    const read = new ShapeReader();
    const plain = read.attempt(() => plainFromJson(read, value));
    const spec = plain === undefined ? undefined : read.attempt(() => readSpec(read, plain));
    return { plain: plain ?? {}, spec: spec ?? { services: {} }, problems: read.problems };
}

function plainFromJson(read: ShapeReader, value: unknown): Record<string, unknown> {
    const spec = read.object(value, []);
    const services = read.attempt(() => read.object(spec.services, ['services'])) ?? {};
    const plainServices: Record<string, unknown> = {};
    for (const [name, service] of Object.entries(services)) {
        const plainService = read.attempt(() => plainServiceFromJson(read, service, ['services', name]));
        if (plainService !== undefined) {
            plainServices[name] = plainService;
        }
    }

    const extra = (spec.extra === undefined ? {} : read.attempt(() => read.object(spec.extra, ['extra']))) ?? {};
    for (const key of ['services', 'volumes', 'networks']) {
        if (key in extra) {
            read.note(['extra', key], `belongs at the top of the model, not in extra`);
        }
    }

    const plain: Record<string, unknown> = { ...extra, services: plainServices };
    if (spec.volumes !== undefined) {
        plain.volumes = spec.volumes;
    }

    if (spec.networks !== undefined) {
        plain.networks = spec.networks;
    }

    return plain;
}

function plainServiceFromJson(read: ShapeReader, value: unknown, path: Path): Record<string, unknown> {
    const { extra: rawExtra, environmentForm, ...typed } = read.object(value, path);
    const extra = (rawExtra === undefined ? {} : read.attempt(() => read.object(rawExtra, [...path, 'extra']))) ?? {};
    const readers = serviceReaders(read);
    for (const key of Object.keys(typed)) {
        if (!(key in readers)) {
            read.note([...path, key], 'is not a field of the model; keys it does not cover go in extra');
        }
    }

    for (const key of Object.keys(extra)) {
        if (key in readers || key === 'environment') {
            read.note([...path, 'extra', key], 'is a field of the model, not an extra');
        }
    }

    if (environmentForm !== undefined && environmentForm !== 'map' && environmentForm !== 'list') {
        read.note([...path, 'environmentForm'], 'must be map or list');
    }

    // The form only applies to the model's map; anything else is read as compose data, in its own form.
    const listForm = environmentForm === 'list' && isPlainObject(typed.environment);
    if (listForm) {
        read.attempt(() => readEnvironment(read, typed.environment, [...path, 'environment']));
    }

    const service = { ...typed, environmentForm: listForm ? 'list' : undefined } as ComposeService;

    return { ...plainService(service), ...extra };
}
