/** One deploy-manager run that changes the host (deploy, nginx update, action, delete); see plugins/deploy/domain/engine. */
import { backupBeforeChange, updateApp } from '../plugins/deploy/domain/backups/backup-runs.ts';
import { actOnApp, applySite, deployApp } from '../plugins/deploy/domain/engine/app-runs.ts';
import { deleteApp } from '../plugins/deploy/domain/engine/delete-app.ts';
import type { AppRunData, RunContext } from '../plugins/deploy/domain/engine/run-context.ts';
import { executeAppRun } from '../plugins/deploy/domain/engine/run-worker.ts';
import { loadIdpKinds, useIdpKindFolders } from '../plugins/idp/idp-kinds.ts';
import { useMethodFolders } from '../plugins/sso/methods.ts';
import { done, jobData } from '../lib/worker.ts';

const data = jobData<AppRunData>();
// The identity-provider kinds as the server has them (IDP_KINDS_DIRS too): the run's checks know each one's forward auth.
useIdpKindFolders(data.config.idpKindDirs);
await loadIdpKinds();
// The sign-in methods as the server has them (SIGN_IN_METHODS_DIRS too): the run writes the chosen one's site.
useMethodFolders(data.config.apps.signInMethodDirs);

const work = {
    deploy: deployApp,
    compose: deployApp,
    sso: deployApp,
    update: (context: RunContext) => updateApp(context, data.backupFirst),
    nginx: applySite,
    action: actOnApp,
    delete: deleteApp,
}[data.kind];

await executeAppRun(data, async (context) => {
    (data.notes ?? []).forEach((note) => context.log(note, 'warning'));
    // An update takes its backup itself: a failure puts the data back from it.
    if (data.backupFirst && data.kind !== 'update') await backupBeforeChange(context, data.backupFirst);
    await work(context);
});
done();
