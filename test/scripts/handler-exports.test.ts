import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { exportedFunctions } from '../../scripts/handler-exports.ts';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

describe('the handler manifest (scripts/handler-exports.ts)', () => {
    it('names the functions a route file exports: declared, given to a constant, or a constant naming one of its own', () => {
        const source = `
            import type { Lifecycle } from '@hapi/hapi';
            const answer: Lifecycle.Method = () => 'ok';
            function helper() { return 1; }
            export async function listThings() { return []; }
            export const getThing: Lifecycle.Method = async (request) => request.params;
            export const renderThing = answer;
            export const LIMIT = 50;
            export type Thing = { id: number };
            export interface Other { id: number }
        `;
        expect(exportedFunctions(source, 'things.ts')).to.equal(['listThings', 'getThing', 'renderThing']);
    });

    it('leaves to an import at start a file whose exports its syntax does not settle', () => {
        const unsettled = [
            "export * from './other.ts';",
            "export { listThings } from './other.ts';",
            'const listThings = () => [];\nexport { listThings };',
            'export const listThings = withPaging(() => []);',
            "import { handler } from './other.ts';\nexport const listThings = handler;",
            'export default function () {}',
            'export class Things {}',
        ];
        for (const source of unsettled) {
            expect(exportedFunctions(source, 'things.ts'), source).to.be.undefined();
        }

        expect(exportedFunctions("export type { Thing } from './other.ts';", 'things.ts')).to.equal([]);
    });
});
