/** Lint rules on what a service may do to the host beyond its files: privileges, capabilities, namespaces, devices. */
import Path from 'node:path';

import { followLinks } from './compose-host-paths.ts';
import type { ServiceLint, ServiceRule } from './compose-lint-types.ts';

/**
 * Capabilities Docker does not grant by default and that reach beyond the container: a way out of it, or a
 * lever on the whole host (its kernel, clock, security policy) rather than the container alone. Each is a risk.
 */
const RISKY_CAPABILITIES: Record<string, string> = {
    ALL: 'every capability: as good as privileged',
    SYS_ADMIN: "mounts, namespaces and most of the kernel's administration: the classic way out of a container",
    SYS_MODULE: "loads kernel modules: its code runs in the host's kernel",
    SYS_RAWIO: "raw I/O ports and memory: it reads and writes the host's hardware",
    SYS_PTRACE: 'traces and controls processes, and reads their memory',
    DAC_READ_SEARCH: "opens files by handle: it reads any file of the host's file systems (the shocker escape)",
    BPF: "loads BPF programs into the host's kernel",
    PERFMON: 'observes every process of the host through performance monitoring and tracing',
    NET_ADMIN: "administers networking, and reaches the kernel's netfilter code behind many container escapes",
    SYS_BOOT: 'reboots the host, or loads another kernel',
    SYS_TIME: "sets the host's clock, for every process and every certificate check",
    MAC_ADMIN: "changes the host's AppArmor or SELinux policy",
    MAC_OVERRIDE: "overrides the host's AppArmor or SELinux policy",
    AUDIT_CONTROL: "changes or turns off the host's audit rules",
};

/**
 * Docker's default set: adding one changes nothing (DAC_OVERRIDE, MKNOD and NET_RAW included: a container has
 * them unless cap_drop removes them), so no finding. Any other capability (SYSLOG, LINUX_IMMUTABLE, SYS_NICE,
 * SYS_RESOURCE, IPC_LOCK, AUDIT_READ...) widens what the container may ask of the host's kernel within its own
 * reach, without a known way out: a warning.
 */
const DEFAULT_CAPABILITIES = [
    'CHOWN',
    'DAC_OVERRIDE',
    'FSETID',
    'FOWNER',
    'MKNOD',
    'NET_RAW',
    'SETGID',
    'SETUID',
    'SETFCAP',
    'SETPCAP',
    'NET_BIND_SERVICE',
    'SYS_CHROOT',
    'KILL',
    'AUDIT_WRITE',
];

/** Devices self-hosted apps commonly need, confined to what they are (GPU, serial adapters, sound, cameras, tun): a warning. */
const COMMON_DEVICES = [/^\/dev\/dri(\/.*)?$/, /^\/dev\/tty(USB|ACM)\d+$/, /^\/dev\/snd(\/.*)?$/, /^\/dev\/video\d+$/, /^\/dev\/net\/tun$/];

/** security_opt entries that switch off a confinement the container has by default. */
const UNCONFINED_OPTIONS: Record<string, RegExp> = {
    seccomp: /^unconfined$/i,
    apparmor: /^unconfined$/i,
    label: /^(disable|type:(spc_t|unconfined_t))$/i,
    systempaths: /^unconfined$/i,
};

export const PRIVILEGE_RULES: ServiceRule[] = [
    privileged,
    networkMode,
    sharedNamespaces,
    capabilities,
    securityOptions,
    devices,
    deviceCgroupRules,
    volumesFrom,
];

function privileged({ name, service, report }: ServiceLint): void {
    if (service.privileged === true) {
        report(
            'risk',
            ['privileged'],
            `${name} runs privileged: it has every capability and every device of the host`,
            'remove privileged: true, and add only the capabilities it needs with cap_add',
        );
    }
}

/** `bridge`, `none` and `service:<one of this file's>` stay within the app; a network by name is someone else's. */
function networkMode({ name, service, report, text }: ServiceLint): void {
    const mode = service.network_mode === undefined ? undefined : text(service.network_mode);
    if (mode === undefined || ['bridge', 'none', 'default'].includes(mode) || mode.startsWith('service:')) {
        return;
    }

    if (mode === 'host') {
        report(
            'risk',
            ['network_mode'],
            `${name} uses the host's network: every port it opens is open on the host, and it sees the host's interfaces`,
            'remove network_mode: host and publish the ports it needs on 127.0.0.1',
        );
    } else if (mode.startsWith('container:')) {
        report(
            'risk',
            ['network_mode'],
            `${name} joins the network of another container (${service.network_mode}), which is not this app's`,
            'remove network_mode, or name a service of this file: service:<name>',
        );
    } else {
        report(
            'warning',
            ['network_mode'],
            `${name} joins the network ${service.network_mode}, outside this app: it reaches whatever else is on it`,
            "remove network_mode, and declare the app's networks under networks",
        );
    }
}

/**
 * Namespaces shared with the host or with another container. pid, ipc and the user namespace shared with the host
 * or a foreign container are risks (processes, shared memory, the remapping of root); uts: host only shares the host's
 * name, and cgroup: host its view of the cgroup tree (Docker's own default on cgroup v1); changing either needs
 * capabilities that are risks on their own, so they are warnings.
 */
function sharedNamespaces(lint: ServiceLint): void {
    const { name, service } = lint;
    const namespaces: Array<{ key: string; value: string | undefined; level: 'risk' | 'warning'; shares: string; foreign: boolean }> = [
        { key: 'pid', value: service.pid, level: 'risk', shares: 'process namespace: it sees and may signal every process', foreign: true },
        { key: 'ipc', value: stringOf(service.extra?.ipc), level: 'risk', shares: 'shared memory and semaphores', foreign: true },
        {
            key: 'userns_mode',
            value: stringOf(service.extra?.userns_mode),
            level: 'risk',
            shares: 'user namespace: its root is root',
            foreign: false,
        },
        { key: 'cgroup', value: stringOf(service.extra?.cgroup), level: 'warning', shares: 'cgroup namespace', foreign: false },
        { key: 'uts', value: stringOf(service.extra?.uts), level: 'warning', shares: 'host name', foreign: false },
    ];
    for (const { key, value, level, shares, foreign } of namespaces) {
        const mode = value === undefined ? undefined : lint.text(value);
        if (mode === 'host') {
            lint.report(level, [key], `${name} shares the host's ${shares}`, `remove ${key}: host`);
        } else if (foreign && mode?.startsWith('container:')) {
            lint.report(
                'risk',
                [key],
                `${name} shares the ${key} namespace of another container (${value}), which is not this app's`,
                `remove ${key}, or name a service of this file: service:<name>`,
            );
        }
    }
}

function capabilities({ name, service, report, text }: ServiceLint): void {
    (service.cap_add ?? []).forEach((written, index) => {
        const capability = text(written).trim().toUpperCase().replace(/^CAP_/, '');
        const risk = RISKY_CAPABILITIES[capability];
        if (risk !== undefined) {
            report('risk', ['cap_add', index], `${name} adds the capability ${written}: ${risk}`, `remove ${written} from cap_add`);
        } else if (!DEFAULT_CAPABILITIES.includes(capability)) {
            report(
                'warning',
                ['cap_add', index],
                `${name} adds the capability ${written}, beyond what Docker grants a container`,
                `remove ${written} from cap_add, unless the app documents that it needs it`,
            );
        }
    });
}

function securityOptions({ name, service, report, text }: ServiceLint): void {
    stringsOf(service.extra?.security_opt).forEach(([written, index]) => {
        const option = text(written).trim();
        const separator = option.search(/[=:]/);
        const key = separator < 0 ? option : option.slice(0, separator);
        const value = separator < 0 ? '' : option.slice(separator + 1);
        if (UNCONFINED_OPTIONS[key]?.test(value)) {
            report(
                'risk',
                ['security_opt', index],
                `${name} turns off its ${key} confinement (${written}): what stops a container from reaching the host is gone`,
                `remove ${written} from security_opt`,
            );
        } else if (key === 'seccomp') {
            report(
                'warning',
                ['security_opt', index],
                `${name} replaces Docker's seccomp profile (${written}), which the lint cannot check`,
                "remove it, unless the profile is at least as strict as Docker's",
            );
        }
    });
}

function devices({ name, service, report, text }: ServiceLint): void {
    (service.devices ?? []).forEach((device, index) => {
        const entry = typeof device === 'string' ? device : device.source;
        const source = text(entry).split(':')[0] ?? '';
        // Values of variables come from the secrets, which findings never show.
        const written = entry.includes('$') ? entry : source;
        const isCdi = !source.startsWith('/') && source.includes('=');
        const paths = isCdi ? [] : [Path.posix.resolve('/', source), followLinks(Path.posix.resolve('/', source))];
        if (isCdi || paths.every((path) => COMMON_DEVICES.some((pattern) => pattern.test(path)))) {
            report(
                'warning',
                ['devices', index],
                `${name} gets the host device ${written}`,
                'remove it, unless the app needs the hardware',
            );
        } else {
            report(
                'risk',
                ['devices', index],
                `${name} gets the host device ${written}: direct access to the host's hardware (disks, memory, ports)`,
                'remove it; give only the device the app needs (a GPU under /dev/dri, a serial adapter)',
            );
        }
    });
}

function deviceCgroupRules({ name, service, report }: ServiceLint): void {
    if (stringsOf(service.extra?.device_cgroup_rules).length > 0) {
        report(
            'risk',
            ['device_cgroup_rules'],
            `${name} may create and use host devices through device_cgroup_rules`,
            'remove device_cgroup_rules, and list the devices it needs under devices',
        );
    }
}

function volumesFrom({ name, service, report, text }: ServiceLint): void {
    stringsOf(service.extra?.volumes_from).forEach(([written, index]) => {
        const source = text(written);
        if (source.startsWith('container:')) {
            report(
                'risk',
                ['volumes_from', index],
                `${name} mounts every volume of another container (${written}), which is not this app's`,
                'remove it, or name a service of this file',
            );
        }
    });
}

function stringOf(value: unknown): string | undefined {
    return typeof value === 'string' ? value : undefined;
}

/** The strings of a list the model keeps verbatim, each with its index; anything else is the schema's to report. */
function stringsOf(value: unknown): Array<[string, number]> {
    return Array.isArray(value)
        ? value.flatMap((item, index): Array<[string, number]> => (typeof item === 'string' ? [[item, index]] : []))
        : [];
}
