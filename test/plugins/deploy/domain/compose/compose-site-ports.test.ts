import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { parseCompose, type SiteLocation, sitePortFindings } from '../../../../../plugins/deploy/domain/compose/compose-model.ts';
import type { Finding } from '../../../../../plugins/deploy/domain/findings/finding.ts';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const ROOT: SiteLocation[] = [{ path: '/', proxyPass: 'http://127.0.0.1:8001' }];

/** The findings for a file whose web service has the given lines (ports, expose...), against the site's locations. */
function findingsFor(serviceLines: string[], locations: SiteLocation[] = ROOT, values: Record<string, string> = {}): Finding[] {
    const text = ['services:', '  web:', '    image: nginx:1.25', ...serviceLines.map((line) => `    ${line}`), ''].join('\n');
    return sitePortFindings(parseCompose(text), locations, values);
}

function brief(findings: Finding[]): string[][] {
    return findings.map((finding) => [finding.level, finding.path]);
}

describe('compose model: the ports the app nginx site proxies to', () => {
    it('finds nothing when a service publishes the port each location proxies to, in any syntax', () => {
        expect(findingsFor(['ports: ["127.0.0.1:8001:80"]'])).to.equal([]);
        expect(findingsFor(['ports: ["8001:80"]'])).to.equal([]);
        expect(findingsFor(['ports: [{target: 80, published: 8001, host_ip: 127.0.0.1}]'])).to.equal([]);
        expect(findingsFor(['ports: ["127.0.0.1:8000-8010:80-90"]'])).to.equal([]);
        expect(findingsFor(['ports: ["127.0.0.1:${WEB_PORT}:80"]'], ROOT, { WEB_PORT: '8001' })).to.equal([]);
        expect(findingsFor(['ports: ["[::1]:8001:80"]'], [{ path: '/', proxyPass: 'http://[::1]:8001/' }])).to.equal([]);
        expect(findingsFor(['ports: ["[::1]:8001:80"]'], [{ path: '/', proxyPass: 'http://localhost:8001' }])).to.equal([]);
        expect(findingsFor(['ports: ["127.0.0.1:8001:80", "127.0.0.1:9001:9000"]'])).to.equal([]);
    });

    it('is an error at the port published instead when / reaches no published port, with both ways to fix it', () => {
        const [finding, ...others] = findingsFor(['ports: ["127.0.0.1:9000:80"]']);
        expect(others).to.equal([]);
        expect(finding).to.equal({
            path: 'services.web.ports[0]',
            level: 'error',
            message:
                "the app's nginx site proxies / to 127.0.0.1:8001, which no service publishes (web publishes 127.0.0.1:9000): " +
                'the deploy would fail when nginx answers 502 Bad Gateway',
            service: 'web',
            field: 'ports',
            fix: `publish "127.0.0.1:8001:80", or point the site's location / at http://127.0.0.1:9000`,
        });
        expect(brief(findingsFor(['ports: ["127.0.0.1:${WEB_PORT}:80"]'], ROOT, { WEB_PORT: '9000' }))).to.equal([
            ['error', 'services.web.ports[0]'],
        ]);
        expect(brief(findingsFor(['ports: [{target: 80, published: "9000"}]']))).to.equal([['error', 'services.web.ports[0]']]);
    });

    it('tells loopback addresses apart, as the deploy binds them', () => {
        const [finding] = findingsFor(['ports: ["[::1]:8001:80"]']);
        expect(finding?.level).to.equal('error');
        expect(finding?.message).to.contain('(web publishes [::1]:8001)');
        expect(finding?.fix).to.equal(`publish "127.0.0.1:8001:80", or point the site's location / at http://[::1]:8001`);
    });

    it('points at a port Docker picks, and at a port a service only exposes', () => {
        const [random] = findingsFor(['ports: ["80"]']);
        expect(brief([random as Finding])).to.equal([['error', 'services.web.ports[0]']]);
        expect(random?.message).to.contain('(web publishes container port 80 on a port Docker picks)');
        expect(random?.fix).to.equal('publish "127.0.0.1:8001:80"');

        const [exposed] = findingsFor(['expose: ["80"]']);
        expect(exposed).to.include({ path: 'services.web.expose[0]', level: 'error', service: 'web', field: 'expose' });
        expect(exposed?.message).to.contain('(web only exposes 80 to the other containers)');
        expect(exposed?.fix).to.equal('publish "127.0.0.1:8001:80"');
    });

    it('only warns when the file publishes nothing, and for locations other than /', () => {
        expect(findingsFor([])).to.equal([
            {
                path: 'services',
                level: 'warning',
                message:
                    "the app's nginx site proxies / to 127.0.0.1:8001, which no service publishes: unless something outside the app " +
                    'answers there, the deploy would fail when nginx answers 502 Bad Gateway',
                fix: `publish the web service's port on it: ports: ["127.0.0.1:8001:<container port>"]`,
            },
        ]);
        const api = [...ROOT, { path: '/api/', proxyPass: 'http://127.0.0.1:8002/api/' }];
        const [finding, ...others] = findingsFor(['ports: ["127.0.0.1:8001:80", "127.0.0.1:8003:81"]'], api);
        expect(others).to.equal([]);
        expect(brief([finding as Finding])).to.equal([['warning', 'services.web.ports[1]']]);
        expect((finding as Finding).message).to.endWith('requests under /api/ would get 502 Bad Gateway');
        expect(brief(findingsFor(['ports: ["127.0.0.1:8001:80/udp"]']))).to.equal([['warning', 'services']]);
    });

    it('does not judge what it cannot know: host networking, unresolved variables, upstreams by name or elsewhere', () => {
        expect(findingsFor(['network_mode: host'])).to.equal([]);
        expect(findingsFor(['ports: ["127.0.0.1:${WEB_PORT}:80"]'])).to.equal([]);
        expect(findingsFor(['ports: ["x:80"]'])).to.equal([]);
        expect(findingsFor(['ports: ["127.0.0.1:9000:80"]'], [{ path: '/', proxyPass: 'http://backend' }])).to.equal([]);
        expect(findingsFor(['ports: ["127.0.0.1:9000:80"]'], [{ path: '/', proxyPass: 'http://10.0.0.5:8001' }])).to.equal([]);
        expect(findingsFor(['ports: ["127.0.0.1:9000:80"]'], [{ path: '/', proxyPass: 'http://127.0.0.1:$port' }])).to.equal([]);
        expect(findingsFor(['ports: ["127.0.0.1:9000:80"]'], [])).to.equal([]);
    });
});
