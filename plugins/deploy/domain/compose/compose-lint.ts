import type { Finding } from '../findings/finding.ts';
import { describePort, isLoopback } from './compose-entries.ts';
import type { LintContext } from './compose-host-paths.ts';
import { interpolate } from './compose-interpolation.ts';
import { bindVolumes, foreignResources, HOST_PATH_RULES, secretFiles } from './compose-lint-host.ts';
import { PRIVILEGE_RULES } from './compose-lint-privileges.ts';
import { SWARM_RULES } from './compose-lint-swarm.ts';
import type { ProjectLint, Reporter, ServiceLint, ServiceRule } from './compose-lint-types.ts';
import { formatPath } from './compose-path.ts';
import type { ComposePort, ComposeSpec } from './compose-types.ts';

const SECRET_NAME = /PASSWORD|PASSWD|SECRET|TOKEN|(^|_)KEY($|_)|APIKEY|PRIVATE/i;
const NOT_SECRET_VALUE = /^(true|false|yes|no|on|off|0|1|none|null)$/i;

const SERVICE_RULES: ServiceRule[] = [
    ...PRIVILEGE_RULES,
    ...HOST_PATH_RULES,
    publishedPorts,
    imageTag,
    healthcheck,
    restartPolicy,
    inlineSecrets,
    dataVolumes,
    dependencyConditions,
    ...SWARM_RULES,
];

const PROJECT_RULES: Array<(lint: ProjectLint) => void> = [bindVolumes, secretFiles, foreignResources];

export function lintSpec(spec: ComposeSpec, context: LintContext): Finding[] {
    const findings: Finding[] = [];
    const text = (value: string) => interpolate(value, context.values);
    for (const [name, service] of Object.entries(spec.services)) {
        const report: Reporter = (level, field, message, fix) => {
            findings.push({ path: formatPath(['services', name, ...field]), level, message, service: name, field: String(field[0]), fix });
        };
        SERVICE_RULES.forEach((rule) => rule({ name, service, context, text, report }));
    }

    const report: Reporter = (level, path, message, fix) => findings.push({ path: formatPath(path), level, message, fix });
    PROJECT_RULES.forEach((rule) => rule({ spec, context, text, report }));
    return findings;
}

function publishedPorts({ name, service, context, report, text }: ServiceLint): void {
    if (service.network_mode !== undefined && text(service.network_mode) === 'host') {
        return;
    }

    (service.ports ?? []).forEach((port, index) => {
        if (!isLoopback(describePort(port, context.values).hostIp)) {
            const { message, fix } = describePublished(name, port);
            report('risk', ['ports', index], message, fix);
        }
    });
}

/** A port is judged with its variables' values but described without them: they come from the secrets, which findings never show. */
function describePublished(name: string, port: ComposePort): { message: string; fix: string } {
    const reachable = 'reachable without the proxy and its sign-in';
    if (JSON.stringify(port).includes('$')) {
        return {
            message: `${name} publishes ${typeof port === 'object' ? JSON.stringify(port) : port} beyond 127.0.0.1, ${reachable}`,
            fix: 'publish on 127.0.0.1 only: "127.0.0.1:<host port>:<container port>"',
        };
    }

    const description = describePort(port);
    const where = description.hostIp === '' ? 'every interface' : description.hostIp;
    return {
        message: `${name} publishes ${description.published ?? 'a random port'} on ${where}, ${reachable}`,
        fix: `publish on 127.0.0.1 only: "127.0.0.1:${description.published ?? description.target}:${description.target}"`,
    };
}

function imageTag({ name, service, report }: ServiceLint): void {
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

function healthcheck({ name, service, context, text, report }: ServiceLint): void {
    const imageHasOne = service.image !== undefined && context.imagesWithHealthcheck?.has(text(service.image)) === true;
    if (service.healthcheck === undefined && !imageHasOne) {
        report(
            'warning',
            ['healthcheck'],
            `${name} declares no healthcheck: a deploy cannot tell when it is ready`,
            'add a healthcheck (test, interval, timeout, retries), unless the image has its own',
        );
    }
}

function restartPolicy({ name, service, report }: ServiceLint): void {
    if (service.restart === undefined) {
        report(
            'warning',
            ['restart'],
            `${name} has no restart policy: it stays down after a crash or a reboot`,
            'add restart: unless-stopped',
        );
    }
}

function inlineSecrets({ name, service, report }: ServiceLint): void {
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

function dataVolumes({ name, service, report }: ServiceLint): void {
    if ((service.volumes ?? []).length === 0) {
        report(
            'info',
            ['volumes'],
            `${name} keeps no data outside its container: whatever it writes is lost when it is recreated`,
            'mount a named volume where it stores its data, if it stores any',
        );
    }
}

function dependencyConditions({ name, service, report }: ServiceLint): void {
    if (Array.isArray(service.depends_on) && service.depends_on.length > 0) {
        report(
            'info',
            ['depends_on'],
            `${name} waits only for its dependencies to start, not to be ready`,
            'use the map form with condition: service_healthy (the dependency needs a healthcheck)',
        );
    }
}
