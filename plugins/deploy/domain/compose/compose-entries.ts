import { interpolate } from './compose-interpolation.ts';
import type { ComposePort, ComposeServiceVolume } from './compose-types.ts';

export interface PortDescription {
    /** Empty when the port is published on every interface. */
    hostIp: string;
    /** A port or a range (`8000-8010`); undefined when only the container port is given (a random host port). */
    published?: string;
    target: string;
    protocol: string;
}

/** Reads a port in short or long syntax, variables substituted (defaults applied, unknown ones empty). */
export function describePort(port: ComposePort, values: Record<string, string> = {}): PortDescription {
    if (typeof port === 'number') {
        return { hostIp: '', target: String(port), protocol: 'tcp' };
    }

    if (typeof port === 'object') {
        const published = port.published === undefined ? undefined : interpolate(String(port.published), values);
        return {
            hostIp: interpolate(port.host_ip ?? '', values),
            ...(published ? { published } : {}),
            target: String(port.target),
            protocol: port.protocol ?? 'tcp',
        };
    }

    return describeShortPort(interpolate(port, values));
}

function describeShortPort(text: string): PortDescription {
    const [address = '', protocol = 'tcp'] = text.split('/');
    let hostIp = '';
    let rest = address;
    const bracketed = /^\[([^\]]*)\]:(.*)$/.exec(address);
    if (bracketed) {
        hostIp = bracketed[1] ?? '';
        rest = bracketed[2] ?? '';
    }

    const parts = rest.split(':');
    const target = parts.pop() ?? '';
    const published = parts.pop();
    if (!bracketed && parts.length > 0) {
        hostIp = parts.join(':');
    }

    return { hostIp, ...(published ? { published } : {}), target, protocol };
}

export function isLoopback(hostIp: string): boolean {
    return hostIp === '::1' || hostIp === 'localhost' || /^127\./.test(hostIp);
}

/** The host ports a description publishes: a range expands, at most `limit` of them. */
export function publishedPorts(port: PortDescription, limit = 256): number[] {
    if (port.published === undefined) {
        return [];
    }

    const [first = '', last = first] = port.published.split('-');
    const start = Number(first);
    const end = Number(last);
    if (!Number.isInteger(start) || !Number.isInteger(end) || start < 1 || end > 65535 || end < start) {
        return [];
    }

    return Array.from({ length: Math.min(end - start + 1, limit) }, (_, offset) => start + offset);
}

export interface VolumeDescription {
    type: string;
    /** A host path for binds, a volume name for named volumes, undefined for anonymous volumes. */
    source?: string;
    target: string;
    readOnly: boolean;
}

export function describeVolume(volume: ComposeServiceVolume, values: Record<string, string> = {}): VolumeDescription {
    if (typeof volume === 'object') {
        const source = volume.source === undefined ? undefined : interpolate(volume.source, values);
        return { type: volume.type, ...(source ? { source } : {}), target: volume.target, readOnly: volume.read_only === true };
    }

    const parts = interpolate(volume, values).split(':');
    if (parts.length === 1) {
        return { type: 'volume', target: parts[0] ?? '', readOnly: false };
    }

    const [source = '', target = '', mode = ''] = parts;
    const readOnly = mode.split(',').includes('ro');
    return { type: isHostPath(source) ? 'bind' : 'volume', source, target, readOnly };
}

function isHostPath(source: string): boolean {
    return /^[./~]/.test(source);
}
