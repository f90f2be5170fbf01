import { describePort, describeVolume, isLoopback } from './compose-entries.ts';
import type { ComposeService, ComposeSpec, Finding, FindingLevel } from './compose-model.ts';
import { formatPath, type PathSegment } from './compose-path.ts';

const DOCKER_SOCKETS = ['/var/run/docker.sock', '/run/docker.sock'];

/** Host paths whose mount gives a container power over the host, or its secrets; subpaths included. */
const SENSITIVE_TREES = [
    '/etc',
    '/root',
    '/var/run',
    '/run',
    '/proc',
    '/sys',
    '/boot',
    '/dev',
    '/var/lib/docker',
    '/usr',
    '/bin',
    '/sbin',
    '/lib',
];

/** Mounted whole, these are too much; their subfolders (/home/alice/photos) are ordinary data. */
const SENSITIVE_EXACT = ['/', '/home', '/var', '/srv', '/mnt', '/opt', '~'];

/** Read-only files from /etc that images commonly need and that give nothing away. */
const HARMLESS_READ_ONLY = ['/etc/localtime', '/etc/timezone', '/etc/machine-id', '/etc/hosts', '/etc/resolv.conf'];

const DANGEROUS_CAPABILITIES = ['ALL', 'SYS_ADMIN', 'CAP_SYS_ADMIN', 'SYS_MODULE', 'CAP_SYS_MODULE', 'SYS_PTRACE', 'CAP_SYS_PTRACE'];

const SECRET_NAME = /PASSWORD|PASSWD|SECRET|TOKEN|(^|_)KEY($|_)|APIKEY|PRIVATE/i;
const NOT_SECRET_VALUE = /^(true|false|yes|no|on|off|0|1|none|null)$/i;

type Rule = (name: string, service: ComposeService, report: Reporter) => void;
type Reporter = (level: FindingLevel, field: PathSegment[], message: string, fix: string) => void;

const RULES: Rule[] = [
    privileged,
    hostNamespaces,
    dangerousCapabilities,
    mountedVolumes,
    publishedPorts,
    imageTag,
    healthcheck,
    restartPolicy,
    inlineSecrets,
    dataVolumes,
    dependencyConditions,
];

export function lintServices(spec: ComposeSpec): Finding[] {
    const findings: Finding[] = [];
    for (const [name, service] of Object.entries(spec.services)) {
        const report: Reporter = (level, field, message, fix) => {
            findings.push({ path: formatPath(['services', name, ...field]), level, message, service: name, field: String(field[0]), fix });
        };
        RULES.forEach((rule) => rule(name, service, report));
    }

    return findings;
}

function privileged(name: string, service: ComposeService, report: Reporter): void {
    if (service.privileged === true) {
        report(
            'risk',
            ['privileged'],
            `${name} runs privileged: it has every capability and every device of the host`,
            'remove privileged: true, and add only the capabilities it needs with cap_add',
        );
    }
}

function hostNamespaces(name: string, service: ComposeService, report: Reporter): void {
    if (service.network_mode === 'host') {
        report(
            'risk',
            ['network_mode'],
            `${name} uses the host's network: every port it opens is open on the host, and it sees the host's interfaces`,
            'remove network_mode: host and publish the ports it needs on 127.0.0.1',
        );
    }

    if (service.pid === 'host') {
        report('risk', ['pid'], `${name} shares the host's process namespace: it sees and may signal every process`, 'remove pid: host');
    }
}

function dangerousCapabilities(name: string, service: ComposeService, report: Reporter): void {
    (service.cap_add ?? []).forEach((capability, index) => {
        if (DANGEROUS_CAPABILITIES.includes(capability.toUpperCase())) {
            report(
                'risk',
                ['cap_add', index],
                `${name} adds the capability ${capability}, close to full control of the host`,
                `remove ${capability} from cap_add`,
            );
        }
    });
}

function mountedVolumes(name: string, service: ComposeService, report: Reporter): void {
    (service.volumes ?? []).forEach((volume, index) => {
        const mount = describeVolume(volume);
        if (mount.type !== 'bind' || mount.source === undefined) {
            return;
        }

        const source = normaliseHostPath(mount.source);
        if (DOCKER_SOCKETS.includes(source)) {
            report(
                'risk',
                ['volumes', index],
                `${name} mounts the Docker socket: it can start containers as root on the host`,
                'remove the mount, or put a socket proxy that allows only the calls it needs in between',
            );
        } else if (isSensitiveHostPath(source, mount.readOnly)) {
            report(
                'risk',
                ['volumes', index],
                `${name} mounts the sensitive host path ${mount.source}`,
                'mount a named volume or a folder of the app instead (./data:/data)',
            );
        }
    });
}

function normaliseHostPath(source: string): string {
    const trimmed = source.replace(/\/+$/, '');
    return trimmed === '' ? '/' : trimmed;
}

function isSensitiveHostPath(source: string, readOnly: boolean): boolean {
    if (readOnly && HARMLESS_READ_ONLY.includes(source)) {
        return false;
    }

    const homeFolder = /^\/home\/[^/]+$/.test(source) || /^~\/?[^/]*$/.test(source);
    return (
        SENSITIVE_EXACT.includes(source) || homeFolder || SENSITIVE_TREES.some((tree) => source === tree || source.startsWith(`${tree}/`))
    );
}

function publishedPorts(name: string, service: ComposeService, report: Reporter): void {
    if (service.network_mode === 'host') {
        return;
    }

    (service.ports ?? []).forEach((port, index) => {
        const description = describePort(port);
        if (!isLoopback(description.hostIp)) {
            const where = description.hostIp === '' ? 'every interface' : description.hostIp;
            const published = description.published ?? 'a random port';
            report(
                'risk',
                ['ports', index],
                `${name} publishes ${published} on ${where}, reachable without the proxy and its sign-in`,
                `publish on 127.0.0.1 only: "127.0.0.1:${description.published ?? description.target}:${description.target}"`,
            );
        }
    });
}

function imageTag(name: string, service: ComposeService, report: Reporter): void {
    const image = service.image;
    if (image === undefined || image.startsWith('$') || image.includes('@')) {
        return;
    }

    const lastSlash = image.lastIndexOf('/');
    const colon = image.indexOf(':', lastSlash + 1);
    const tag = colon < 0 ? undefined : image.slice(colon + 1);
    if (tag === undefined || tag === 'latest') {
        const said = tag === undefined ? 'has no tag (so latest)' : 'uses the tag latest';
        report(
            'warning',
            ['image'],
            `${name}'s image ${said}: a restart may bring a different version`,
            `pin a version: ${colon < 0 ? image : image.slice(0, colon)}:<version>`,
        );
    }
}

function healthcheck(name: string, service: ComposeService, report: Reporter): void {
    if (service.healthcheck === undefined) {
        report(
            'warning',
            ['healthcheck'],
            `${name} declares no healthcheck: a deploy cannot tell when it is ready`,
            'add a healthcheck (test, interval, timeout, retries), unless the image has its own',
        );
    }
}

function restartPolicy(name: string, service: ComposeService, report: Reporter): void {
    if (service.restart === undefined) {
        report(
            'warning',
            ['restart'],
            `${name} has no restart policy: it stays down after a crash or a reboot`,
            'add restart: unless-stopped',
        );
    }
}

function inlineSecrets(name: string, service: ComposeService, report: Reporter): void {
    for (const [variable, value] of Object.entries(service.environment ?? {})) {
        const looksSecret = SECRET_NAME.test(variable) && !/_FILE$/i.test(variable);
        if (looksSecret && value !== null && value !== '' && !value.includes('$') && !NOT_SECRET_VALUE.test(value)) {
            report(
                'warning',
                ['environment', variable],
                `${name} has the secret ${variable} written in the compose file`,
                `move it to the secrets file and write ${variable}: \${${variable}}`,
            );
        }
    }
}

function dataVolumes(name: string, service: ComposeService, report: Reporter): void {
    if ((service.volumes ?? []).length === 0) {
        report(
            'info',
            ['volumes'],
            `${name} keeps no data outside its container: whatever it writes is lost when it is recreated`,
            'mount a named volume where it stores its data, if it stores any',
        );
    }
}

function dependencyConditions(name: string, service: ComposeService, report: Reporter): void {
    if (Array.isArray(service.depends_on) && service.depends_on.length > 0) {
        report(
            'info',
            ['depends_on'],
            `${name} waits only for its dependencies to start, not to be ready`,
            'use the map form with condition: service_healthy (the dependency needs a healthcheck)',
        );
    }
}
