// The subset of the Python extension's API that the Mantle extension uses.
const vscode = require('vscode');

exports.activate = function activate(context) {
  const log = vscode.window.createOutputChannel('Fake Python', { log: true });
  const current = () => vscode.workspace.getConfiguration('fakePython').get('interpreter') || '';
  const changed = new vscode.EventEmitter();
  log.info(`activated: interpreter ${current()}`);
  context.subscriptions.push(
    log,
    vscode.workspace.onDidChangeConfiguration((e) => {
      log.info(`configuration changed; interpreter ${current()}`);
      if (e.affectsConfiguration('fakePython.interpreter')) {
        changed.fire({ id: current(), path: current() });
      }
    }),
  );
  return {
    environments: {
      getActiveEnvironmentPath: () => ({ id: current(), path: current() }),
      resolveEnvironment: async (env) => {
        const p = typeof env === 'string' ? env : env.path;
        return p ? { executable: { uri: vscode.Uri.file(p) } } : undefined;
      },
      onDidChangeActiveEnvironmentPath: changed.event,
    },
  };
};
