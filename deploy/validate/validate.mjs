// Validates Kubernetes manifests offline against the schemas that the npm
// package kubernetes-models ships (and its Prometheus Operator companion for
// PodMonitor; both are ES modules, hence .mjs), so a wrong type, a bad
// value or a missing required field fails the tests instead of a deploy.
// (The schemas allow unknown fields: a misspelt optional field passes.)
//   node validate.mjs FILE...           validate every document in each file
//   node validate.mjs --to-json FILE    print the file's documents as JSON

import fs from 'node:fs';
import YAML from 'yaml';

function documents(file) {
  return YAML.parseAllDocuments(fs.readFileSync(file, 'utf8')).map((doc) => {
    if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors[0].message}`);
    return doc.toJS();
  }).filter((doc) => doc !== null);
}

// The model class for an object's apiVersion and kind.
async function modelFor(apiVersion, kind) {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  const modulePath = group === 'monitoring.coreos.com'
      ? `@kubernetes-models/prometheus-operator/${group}/${version}/${kind}`
      : `kubernetes-models/${group === '' ? '' : group + '/'}${version}/${kind}`;
  try {
    return (await import(modulePath))[kind];
  } catch (e) {
    throw new Error(`no schema for ${apiVersion} ${kind}`);
  }
}

async function validateFile(file) {
  let count = 0;
  for (const doc of documents(file)) {
    const where = `${file}: ${doc.kind} ${doc.metadata && doc.metadata.name}`;
    const Model = await modelFor(doc.apiVersion, doc.kind);
    try {
      new Model(doc).validate();
    } catch (e) {
      throw new Error(`${where}: ${e.message}`);
    }
    console.log(`ok ${where}`);
    ++count;
  }
  if (count === 0) throw new Error(`${file}: no Kubernetes objects`);
}

async function main(args) {
  if (args[0] === '--to-json') {
    process.stdout.write(JSON.stringify(documents(args[1])) + '\n');
    return 0;
  }
  let failed = 0;
  for (const file of args) {
    try {
      await validateFile(file);
    } catch (e) {
      console.error(`invalid ${e.message}`);
      failed = 1;
    }
  }
  return failed;
}

process.exitCode = await main(process.argv.slice(2));
