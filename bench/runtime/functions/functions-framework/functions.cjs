// One source, three targets: --target=hello | echo | cloudevent.
const functions = require('@google-cloud/functions-framework');

functions.http('hello', (req, res) => {
  res.type('text/plain').send('Hello, world!');
});

functions.http('echo', (req, res) => {
  res.json(req.body);
});

// A CloudEvent function's return value is not sent as an event: the framework answers 204.
functions.cloudEvent('cloudevent', (event) => {
  if (event.data === undefined) throw new Error('event without data');
});
