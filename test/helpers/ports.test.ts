import { spawnSync } from 'node:child_process';
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { appHostPorts, freePorts, PORT_CLAIMS_DIR } from './server.ts';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const HELPER = Path.join(import.meta.dirname, 'server.ts');

/** Ports a separate test process is given, while it runs, and the claim files it leaves once it has exited. */
function portsOfAnotherProcess(): { blocks: number[]; ports: number[]; claimsWhileRunning: string[] } {
    const script = [
        `const { appHostPorts, freePorts } = await import(${JSON.stringify(HELPER)});`,
        'const blocks = [];',
        'for (let index = 0; index < 5; index += 1) blocks.push(await appHostPorts());',
        'const ports = await freePorts(20);',
        `const claimsWhileRunning = (await import('node:fs')).readdirSync(${JSON.stringify(PORT_CLAIMS_DIR)});`,
        'console.log(JSON.stringify({ blocks, ports, claimsWhileRunning }));',
    ].join('\n');
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(child.status, child.stderr).to.equal(0);
    return JSON.parse(child.stdout) as ReturnType<typeof portsOfAnotherProcess>;
}

describe('test ports', () => {
    it('never gives two test processes running at once the same port or block of app ports, and frees them at exit', async () => {
        const blocks = [await appHostPorts(), await appHostPorts(), await appHostPorts()];
        const ports = await freePorts(20);
        const other = portsOfAnotherProcess();

        for (const base of [...blocks, ...other.blocks]) {
            expect((base - 20_000) % 40).to.equal(0);
        }

        expect(new Set([...blocks, ...other.blocks]).size).to.equal(8);
        expect(new Set([...ports, ...other.ports]).size).to.equal(40);
        expect(other.claimsWhileRunning).to.include(other.blocks.map((base) => `apps-${base}`));
        const left = Fs.readdirSync(PORT_CLAIMS_DIR);
        expect(left).to.include(blocks.map((base) => `apps-${base}`));
        expect(left).to.not.include(other.blocks.map((base) => `apps-${base}`));
        expect(left).to.not.include(other.ports.map((port) => `port-${port}`));
    });
});
