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
import { isPlainObject, type Path, ShapeReader } from './shape-reader.ts';

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
        ports: (value, path) => read.list(value, path).map((item, index) => readPort(read, item, [...path, index])),
        volumes: (value, path) => read.list(value, path).map((item, index) => readServiceVolume(read, item, [...path, index])),
        networks: (value, path) => readServiceNetworks(read, value, path),
        depends_on: (value, path) => readDependsOn(read, value, path),
        healthcheck: (value, path) => readHealthcheck(read, value, path),
        restart: string,
        labels: (value, path) => (Array.isArray(value) ? read.stringList(value, path) : read.textMap(value, path)),
        user: string,
        cap_add: (value, path) => read.stringList(value, path),
        devices: (value, path) => read.list(value, path).map((item, index) => readDevice(read, item, [...path, index])),
        logging: (value, path) => readLogging(read, value, path),
        container_name: string,
        working_dir: string,
        expose: (value, path) => read.list(value, path).map((item, index) => readExposed(read, item, [...path, index])),
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

    const environment: Record<string, string | null> = {};
    for (const [name, item] of Object.entries(read.object(value, path))) {
        const scalar = read.scalar(item, [...path, name]);
        environment[name] = scalar === null ? null : String(scalar);
    }

    return { environment, form: 'map' };
}

function readEnvFile(read: ShapeReader, value: unknown, path: Path): string | Array<string | ComposeEnvFile> {
    if (typeof value === 'string') {
        return value;
    }

    return read.list(value, path).map((item, index) =>
        typeof item === 'string'
            ? item
            : read.fields<ComposeEnvFile>(item, [...path, index], {
                  path: (field, at) => read.string(field, at),
                  required: (field, at) => read.boolean(field, at),
              }),
    );
}

function readPort(read: ShapeReader, value: unknown, path: Path): ComposePort {
    if (typeof value === 'string' || typeof value === 'number') {
        return value;
    }

    const port = read.fields<ComposePortLong>(value, path, {
        target: (field, at) => read.number(field, at),
        published: (field, at) => (typeof field === 'number' ? field : read.string(field, at)),
        host_ip: (field, at) => read.string(field, at),
        protocol: (field, at) => read.string(field, at),
        mode: (field, at) => read.string(field, at),
    });
    if (port.target === undefined) {
        read.fail([...path, 'target'], 'is required (the container port)');
    }

    return port;
}

function readServiceVolume(read: ShapeReader, value: unknown, path: Path): ComposeServiceVolume {
    if (typeof value === 'string') {
        return value;
    }

    const volume = read.fields<ComposeVolumeLong>(value, path, {
        type: (field, at) => read.string(field, at),
        source: (field, at) => read.string(field, at),
        target: (field, at) => read.string(field, at),
        read_only: (field, at) => read.boolean(field, at),
        bind: (field, at) => read.object(field, at),
        volume: (field, at) => read.object(field, at),
        tmpfs: (field, at) => read.object(field, at),
    });
    if (volume.type === undefined) {
        read.fail([...path, 'type'], 'is required (volume, bind, tmpfs, ...)');
    }

    if (volume.target === undefined) {
        read.fail([...path, 'target'], 'is required (the path in the container)');
    }

    return volume;
}

function readServiceNetworks(read: ShapeReader, value: unknown, path: Path): ComposeService['networks'] {
    if (Array.isArray(value)) {
        return read.stringList(value, path);
    }

    const networks: Record<string, ComposeServiceNetwork | null> = {};
    for (const [name, item] of Object.entries(read.object(value, path))) {
        networks[name] =
            item === null
                ? null
                : read.fields<ComposeServiceNetwork>(item, [...path, name], {
                      aliases: (field, at) => read.stringList(field, at),
                      ipv4_address: (field, at) => read.string(field, at),
                      ipv6_address: (field, at) => read.string(field, at),
                  });
    }

    return networks;
}

function readDependsOn(read: ShapeReader, value: unknown, path: Path): ComposeService['depends_on'] {
    if (Array.isArray(value)) {
        return read.stringList(value, path);
    }

    const dependencies: Record<string, ComposeDependency> = {};
    for (const [name, item] of Object.entries(read.object(value, path))) {
        dependencies[name] = read.fields<ComposeDependency>(item, [...path, name], {
            condition: (field, at) => readCondition(read, field, at),
            required: (field, at) => read.boolean(field, at),
            restart: (field, at) => read.boolean(field, at),
        });
        if (dependencies[name].condition === undefined) {
            read.fail([...path, name, 'condition'], `is required: ${CONDITIONS.join(', ')}`);
        }
    }

    return dependencies;
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
        options: (field, at) => {
            const options = read.object(field, at);
            Object.entries(options).forEach(([name, option]) => read.scalar(option, [...at, name]));
            return options;
        },
    });
}

function readDevice(read: ShapeReader, value: unknown, path: Path): string | ComposeDevice {
    if (typeof value === 'string') {
        return value;
    }

    const device = read.fields<ComposeDevice>(value, path, {
        source: (field, at) => read.string(field, at),
        target: (field, at) => read.string(field, at),
        permissions: (field, at) => read.string(field, at),
    });
    if (device.source === undefined) {
        read.fail([...path, 'source'], 'is required (the device on the host)');
    }

    return device;
}

function readExposed(read: ShapeReader, value: unknown, path: Path): string | number {
    return typeof value === 'number' ? value : read.string(value, path);
}

function readService(read: ShapeReader, value: unknown, path: Path): ComposeService {
    const raw = read.object(value, path);
    const readers = serviceReaders(read);
    const service: ComposeService = {};
    const extra: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(raw)) {
        if (key === 'environment') {
            const { environment, form } = readEnvironment(read, item, [...path, key]);
            Object.assign(service, { environment, environmentForm: form });
        } else if (key in readers) {
            const reader = readers[key as TypedServiceKey] as (value: unknown, path: Path) => unknown;
            Object.assign(service, { [key]: reader(item, [...path, key]) });
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
    const result: Record<string, T | null> = {};
    for (const [name, item] of Object.entries(read.object(value, path))) {
        result[name] =
            item === null
                ? null
                : read.fields<T>(item, [...path, name], {
                      driver: (field, at) => read.string(field, at),
                      name: (field, at) => read.string(field, at),
                      driver_opts: (field, at) => read.object(field, at),
                  });
    }

    return result;
}

/** Turns plain compose data (from YAML) into the model, checking the types of what the model covers. */
export function modelFromPlain(plain: Record<string, unknown>, lineOf?: LineOf): ComposeSpec {
    const read = new ShapeReader(lineOf);
    if (plain.services === undefined) {
        read.fail(['services'], 'is required: a compose file needs at least one service');
    }

    const services: Record<string, ComposeService> = {};
    for (const [name, service] of Object.entries(read.object(plain.services, ['services']))) {
        services[name] = readService(read, service, ['services', name]);
    }

    const spec: ComposeSpec = { services };
    if (plain.volumes !== undefined) {
        spec.volumes = readTopLevelObjects<ComposeVolume>(read, plain.volumes, ['volumes']);
    }

    if (plain.networks !== undefined) {
        spec.networks = readTopLevelObjects<ComposeNetwork>(read, plain.networks, ['networks']);
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
    const spec = read.object(value, []);
    const services = read.object(spec.services, ['services']);
    const plainServices: Record<string, unknown> = {};
    for (const [name, service] of Object.entries(services)) {
        plainServices[name] = plainServiceFromJson(read, service, ['services', name]);
    }

    const extra = spec.extra === undefined ? {} : read.object(spec.extra, ['extra']);
    for (const key of ['services', 'volumes', 'networks']) {
        if (key in extra) {
            read.fail(['extra', key], `belongs at the top of the model, not in extra`);
        }
    }

    const plain: Record<string, unknown> = { ...extra, services: plainServices };
    if (spec.volumes !== undefined) {
        plain.volumes = spec.volumes;
    }

    if (spec.networks !== undefined) {
        plain.networks = spec.networks;
    }

    return modelFromPlain(plain);
}

function plainServiceFromJson(read: ShapeReader, value: unknown, path: Path): Record<string, unknown> {
    const { extra: rawExtra, environmentForm, ...typed } = read.object(value, path);
    const extra = rawExtra === undefined ? {} : read.object(rawExtra, [...path, 'extra']);
    const readers = serviceReaders(read);
    for (const key of Object.keys(typed)) {
        if (!(key in readers)) {
            read.fail([...path, key], 'is not a field of the model; keys it does not cover go in extra');
        }
    }

    for (const key of Object.keys(extra)) {
        if (key in readers || key === 'environment') {
            read.fail([...path, 'extra', key], 'is a field of the model, not an extra');
        }
    }

    if (environmentForm !== undefined && environmentForm !== 'map' && environmentForm !== 'list') {
        read.fail([...path, 'environmentForm'], 'must be map or list');
    }

    // The form only applies to the model's map; anything else is read as compose data, in its own form.
    const listForm = environmentForm === 'list' && isPlainObject(typed.environment);
    if (listForm) {
        readEnvironment(read, typed.environment, [...path, 'environment']);
    }

    const service = { ...typed, environmentForm: listForm ? 'list' : undefined } as ComposeService;

    return { ...plainService(service), ...extra };
}
