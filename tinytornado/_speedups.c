/* Optional C speedups for gen.py's coroutines (gen.py's docstring tells where they fit).
 *
 * Two pieces, each the twin of pure-Python code in gen.py that runs when this module is
 * not built or TINYTORNADO_EXTENSION=0, with the same behaviour (the tests run both):
 *
 * - CoroutineFunction, gen.coroutine's wrapper (gen._python_wrapper): the call, the first
 *   next() and the catch of Return run without a Python frame of their own.
 * - RunnerCore, the base of the Runner it starts (gen._PythonRunner and _start_runner):
 *   its fields and `run`, the loop that sends each result into the generator and waits
 *   for what it yields. Only the common cases are here: a yielded Future or moment, a
 *   success sent in, a return or a failure out. The rest (cancellation, other yieldables,
 *   failing the coroutine's Future) calls gen.Runner's Python methods.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>  /* offsetof */
#include <structmember.h>

#ifndef Py_XSETREF  /* 2.7 */
#define Py_XSETREF(target, value) \
    do { PyObject *_old = (PyObject *)(target); (target) = (value); Py_XDECREF(_old); } while (0)
#endif

#if PY_MAJOR_VERSION >= 3
#define int_from_ssize_t PyLong_FromSsize_t
#else
#define int_from_ssize_t PyInt_FromSsize_t  /* What Python code makes of `depth + 1`. */
#endif

/* What gen.py hands over once, through configure(). */
static PyObject *future_class;    /* concurrent.Future */
static PyObject *return_class;    /* gen.Return */
static PyObject *pending_state;   /* concurrent._PENDING */
static PyObject *finished_state;  /* concurrent._FINISHED */
static PyObject *moment;          /* gen.moment */
static PyObject *resolved;        /* gen._resolved: what a Runner "waits" on after moment */
static PyObject *thread_state;    /* ioloop._thread_state */
static PyObject *current_loop;    /* IOLoop.current */
static PyTypeObject *runner_class;  /* gen's subclass of RunnerCore and gen.Runner */
static Py_ssize_t max_return_depth;  /* gen._MAX_RETURN_DEPTH */

static PyObject *str_result, *str_state, *str_exc_info, *str_set_exc_info, *str_value,
    *str_callbacks, *str_canceller, *str_return_depth, *str_run, *str_add_callback,
    *str_cancel, *str_append, *str_deliver, *str_handle_yield, *str_fail,
    *str_run_callbacks, *str_instance, *str_send;

/* obj.name() or obj.name(arg) when arg is not NULL. */
static PyObject *
call_method(PyObject *obj, PyObject *name, PyObject *arg)
{
#if PY_VERSION_HEX >= 0x03090000
    PyObject *args[2] = {obj, arg};
    return PyObject_VectorcallMethod(name, args, arg == NULL ? 1 : 2, NULL);
#else
    return PyObject_CallMethodObjArgs(obj, name, arg, NULL);
#endif
}

typedef struct {
    PyObject_HEAD
    PyObject *func;
    PyObject *dict;
    PyObject *weakreflist;
#if PY_VERSION_HEX >= 0x03090000
    vectorcallfunc vectorcall;
#endif
} CoroutineFunction;

/* A Future already resolved with `value` (a new reference), as gen.py's wrapper makes
 * it: no callback can have been added yet, so no set_result bookkeeping. */
static PyObject *
resolved_future(PyObject *value)
{
    PyObject *future = PyObject_CallObject(future_class, NULL);
    if (future == NULL)
        return NULL;
    if (PyObject_SetAttr(future, str_result, value) < 0 ||
        PyObject_SetAttr(future, str_state, finished_state) < 0 ||
        PyObject_SetAttr(future, str_exc_info, Py_None) < 0) {
        Py_DECREF(future);
        return NULL;
    }
    return future;
}

/* If the error set now is Return or StopIteration (the generator returned): clear it, set
 * *value to the returned value (a new reference) and give 1. Otherwise give 0 and leave
 * the error set. */
static int
fetch_return_value(PyObject **value)
{
    PyObject *type, *exc, *tb, *args;
    int is_return = PyErr_ExceptionMatches(return_class);

    if (!is_return && !PyErr_ExceptionMatches(PyExc_StopIteration))
        return 0;
    PyErr_Fetch(&type, &exc, &tb);
    PyErr_NormalizeException(&type, &exc, &tb);
    *value = NULL;
    if (!is_return) {
        /* _compat.value_from_stop_iteration: .value (3.3+), else the only argument. */
        *value = PyObject_GetAttr(exc, str_value);
        if (*value == NULL)
            PyErr_Clear();
        else if (*value == Py_None)
            Py_CLEAR(*value);
    }
    if (*value == NULL) {
        /* args, as gen.py reads it: Return.value is a property over it. */
        args = ((PyBaseExceptionObject *)exc)->args;
        *value = (args != NULL && PyTuple_GET_SIZE(args) > 0)
            ? PyTuple_GET_ITEM(args, 0) : Py_None;
        Py_INCREF(*value);
    }
    Py_XDECREF(type);
    Py_XDECREF(exc);
    Py_XDECREF(tb);
    return 1;
}

/* The error set now, cleared, as the (type, value, traceback) that sys.exc_info() would
 * give in an except clause. */
static PyObject *
fetch_exc_info(void)
{
    PyObject *type, *value, *tb, *exc_info;

    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (tb == NULL) {
        Py_INCREF(Py_None);
        tb = Py_None;
    }
#if PY_MAJOR_VERSION >= 3
    else {
        PyException_SetTraceback(value, tb);
    }
#endif
    exc_info = PyTuple_Pack(3, type, value, tb);
    Py_DECREF(type);
    Py_DECREF(value);
    Py_DECREF(tb);
    return exc_info;
}

/* The error set now, as the coroutine's outcome: Return and StopIteration give their
 * value, any other Exception a failed Future; a BaseException that is not an Exception
 * (KeyboardInterrupt, SystemExit) propagates, as from the Python wrapper. */
static PyObject *
future_from_error(void)
{
    PyObject *value, *exc_info, *future, *result;

    if (fetch_return_value(&value)) {
        future = resolved_future(value);
        Py_DECREF(value);
        return future;
    }
    if (!PyErr_ExceptionMatches(PyExc_Exception))
        return NULL;
    exc_info = fetch_exc_info();
    if (exc_info == NULL)
        return NULL;
    future = PyObject_CallObject(future_class, NULL);
    if (future != NULL) {
        result = call_method(future, str_set_exc_info, exc_info);
        if (result == NULL)
            Py_CLEAR(future);
        Py_XDECREF(result);
    }
    Py_DECREF(exc_info);
    return future;
}

/* ---- The Runner: gen._PythonRunner's fields and `run`, in C ---- */

typedef struct {
    PyObject_HEAD
    PyObject *gen;            /* NULL or None (both read as None) once it has ended. */
    PyObject *result_future;
    PyObject *future;         /* What the generator waits for. */
    PyObject *io_loop;
    char running;
    char must_cancel;
    Py_ssize_t return_depth;
} RunnerCore;

#define RUNNER_ENDED(self) ((self)->gen == NULL || (self)->gen == Py_None)

/* self.io_loop.add_callback(self.run) */
static int
schedule_run(RunnerCore *self)
{
    PyObject *run, *result;

    if (self->io_loop == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "a Runner is set up by gen._start_runner");
        return -1;
    }
    run = PyObject_GetAttr((PyObject *)self, str_run);
    if (run == NULL)
        return -1;
    result = call_method(self->io_loop, str_add_callback, run);
    Py_DECREF(run);
    if (result == NULL)
        return -1;
    Py_DECREF(result);
    return 0;
}

/* Take what the generator yielded (stolen) as run's loop and start_runner both take it: 1
 * when self->future is now the Future to look at, 0 when it gave up the loop pass (a
 * moment: run is scheduled), -1 with the error set. Anything but a Future or moment goes
 * through handle_yield. */
static int
take_yielded(RunnerCore *self, PyObject *yielded)
{
    PyObject *result;
    int taken;

    if (Py_TYPE(yielded) == (PyTypeObject *)future_class) {
        Py_XSETREF(self->future, yielded);
        return 1;
    }
    if (yielded == moment) {
        Py_DECREF(yielded);
        Py_INCREF(resolved);
        Py_XSETREF(self->future, resolved);
        return schedule_run(self);
    }
    result = call_method((PyObject *)self, str_handle_yield, yielded);
    Py_DECREF(yielded);
    if (result == NULL)
        return -1;
    taken = PyObject_IsTrue(result);
    Py_DECREF(result);
    return taken;
}

/* gen.send(value): 1 with *result what it yielded; 0 with *result what it returned,
 * when that needs no StopIteration (3.10's PyIter_Send, or next() returning None before
 * it); -1 with the error set, StopIteration or Return among them. Only a generator takes
 * those shortcuts: anything else set as a Runner's gen has its send() called, as by the
 * Python run. */
static int
send_into(PyObject *gen, PyObject *value, PyObject **result)
{
    if (!PyGen_CheckExact(gen)) {
        *result = call_method(gen, str_send, value);
        return *result != NULL ? 1 : -1;
    }
#if PY_VERSION_HEX >= 0x030A0000
    switch (PyIter_Send(gen, value, result)) {
    case PYGEN_NEXT:
        return 1;
    case PYGEN_RETURN:
        return 0;
    default:
        return -1;
    }
#else
    /* For a generator, next() is send(None) without a method call. */
    *result = value == Py_None ? Py_TYPE(gen)->tp_iternext(gen)
                               : call_method(gen, str_send, value);
    if (*result != NULL)
        return 1;
    if (PyErr_Occurred())
        return -1;
    Py_INCREF(Py_None);
    *result = Py_None;
    return 0;
#endif
}

/* Wait for the pending `future`: register self.run as its done-callback, and pass on a
 * cancel() that came while the generator ran. */
static int
wait_for(RunnerCore *self, PyObject *future)
{
    PyObject *run, *callbacks, *result;
    int status, cancelled;

    Py_INCREF(future);
    Py_XSETREF(self->future, future);
    run = PyObject_GetAttr((PyObject *)self, str_run);
    if (run == NULL)
        return -1;
    callbacks = PyObject_GetAttr(future, str_callbacks);
    if (callbacks == NULL) {
        status = -1;
    } else if (callbacks == Py_None) {
        PyObject *list = PyList_New(1);
        status = -1;
        if (list != NULL) {
            Py_INCREF(run);
            PyList_SET_ITEM(list, 0, run);
            status = PyObject_SetAttr(future, str_callbacks, list);
            Py_DECREF(list);
        }
    } else if (PyList_CheckExact(callbacks)) {
        status = PyList_Append(callbacks, run);
    } else {
        result = call_method(callbacks, str_append, run);
        status = result != NULL ? 0 : -1;
        Py_XDECREF(result);
    }
    Py_XDECREF(callbacks);
    Py_DECREF(run);
    if (status < 0 || !self->must_cancel)
        return status;
    result = call_method(future, str_cancel, NULL);
    if (result == NULL)
        return -1;
    cancelled = PyObject_IsTrue(result);
    Py_DECREF(result);
    if (cancelled < 0)
        return -1;
    if (cancelled)
        self->must_cancel = 0;  /* Its CancelledError will reach the generator. */
    return 0;
}

/* The generator returned `value` (stolen): resolve the coroutine's Future. */
static PyObject *
resolve(RunnerCore *self, PyObject *value)
{
    PyObject *future, *depth, *state;
    PyObject *result = NULL;

    /* Dropping the generator can run code (a weakref callback, a finalizer) that changes
     * the fields: result_future is read after it, as in the Python run. */
    Py_CLEAR(self->gen);
    future = self->result_future != NULL ? self->result_future : Py_None;
    Py_INCREF(future);
    depth = int_from_ssize_t(self->return_depth);
    if (depth == NULL || PyObject_SetAttr(future, str_return_depth, depth) < 0)
        goto done;
    state = PyObject_GetAttr(future, str_state);
    if (state == NULL)
        goto done;
    Py_DECREF(state);  /* Compared by identity only; concurrent keeps it alive. */
    if (state != pending_state) {  /* Resolved from outside meanwhile. */
        Py_INCREF(Py_None);
        result = Py_None;
    } else if (PyObject_SetAttr(future, str_result, value) == 0 &&
               PyObject_SetAttr(future, str_state, finished_state) == 0) {
        result = call_method(future, str_run_callbacks, NULL);
    }
done:
    Py_XDECREF(depth);
    Py_DECREF(future);
    Py_DECREF(value);
    return result;
}

/* The generator raised the error set now: self._fail(exc_info), or the error propagates
 * if it is no Exception (KeyboardInterrupt, SystemExit). */
static PyObject *
fail(RunnerCore *self)
{
    PyObject *exc_info, *result;

    if (!PyErr_ExceptionMatches(PyExc_Exception))
        return NULL;
    exc_info = fetch_exc_info();
    if (exc_info == NULL)
        return NULL;
    result = call_method((PyObject *)self, str_fail, exc_info);
    Py_DECREF(exc_info);
    return result;
}

/* gen._PythonRunner.run's loop, between `running = True` and its `finally`. */
static PyObject *
runner_loop(RunnerCore *self)
{
    PyObject *future = self->future, *attr, *value, *yielded;
    int sent, taken;

    Py_INCREF(future);
    for (;;) {
        attr = PyObject_GetAttr(future, str_state);
        if (attr == NULL)
            goto error;
        Py_DECREF(attr);  /* Compared by identity only. */
        if (attr == pending_state) {
            if (wait_for(self, future) < 0)
                goto error;
            Py_DECREF(future);
            Py_RETURN_NONE;
        }
        /* From here on, as inside the Python run's `try`: an error reading the Future's
         * fields is the coroutine's outcome, as one the generator raised. */
        attr = PyObject_GetAttr(future, str_exc_info);
        Py_XDECREF(attr);  /* Compared by identity only. */
        if (attr == NULL) {
            sent = -1;
        } else if (attr == Py_None && !self->must_cancel && !RUNNER_ENDED(self)) {
            value = PyObject_GetAttr(future, str_result);
            if (value == NULL) {
                sent = -1;
            } else {
                /* Held for the send, as by the Python run's `self.gen.send`: the
                 * generator may drop its Runner's reference while it runs. */
                PyObject *generator = self->gen;
                Py_INCREF(generator);
                sent = send_into(generator, value, &yielded);
                Py_DECREF(generator);
                Py_DECREF(value);
            }
        } else {
            /* A failure, a waiting cancel, or (never from run's callers) an ended
             * generator: _deliver raises what the Python run would. */
            yielded = call_method((PyObject *)self, str_deliver, future);
            sent = yielded != NULL ? 1 : -1;
        }
        Py_CLEAR(future);
        if (sent < 0) {
            if (!fetch_return_value(&yielded))
                return fail(self);
            sent = 0;
        }
        if (sent == 0)
            return resolve(self, yielded);
        taken = take_yielded(self, yielded);
        if (taken < 0)
            return NULL;
        if (!taken)
            Py_RETURN_NONE;  /* It gave up the loop pass. */
        /* What handle_yield may have left, read as the Python run reads it: a converter
         * giving None fails at the next field read (None._state), as there. */
        future = self->future != NULL ? self->future : Py_None;
        Py_INCREF(future);
    }
error:
    Py_XDECREF(future);
    return NULL;
}

/* run(done=None), as gen._PythonRunner.run: see its docstring. */
static PyObject *
runner_run_done(RunnerCore *self, PyObject *done)
{
    PyObject *result;

    if (done != NULL && done != Py_None) {
        Py_ssize_t depth = 0;
        PyObject *depth_obj = PyObject_GetAttr(done, str_return_depth);
        if (depth_obj == NULL)
            return NULL;
        if (depth_obj != Py_None) {
            depth = PyNumber_AsSsize_t(depth_obj, PyExc_OverflowError);
            if (depth == -1 && PyErr_Occurred()) {
                Py_DECREF(depth_obj);
                return NULL;
            }
        }
        if (depth_obj == Py_None || depth >= max_return_depth) {
            Py_DECREF(depth_obj);
            if (schedule_run(self) < 0)
                return NULL;
            Py_RETURN_NONE;
        }
        Py_DECREF(depth_obj);
        if (self->running || RUNNER_ENDED(self))
            Py_RETURN_NONE;
        self->return_depth = depth + 1;  /* How many returning stacks this one runs in. */
    } else if (self->running || RUNNER_ENDED(self)) {
        Py_RETURN_NONE;
    }
    if (self->future == NULL || self->io_loop == NULL || self->result_future == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "a Runner is set up by gen._start_runner");
        return NULL;
    }
    self->running = 1;
    result = runner_loop(self);
    self->running = 0;
    self->return_depth = 0;  /* The loop runs it next, or the next returning stack. */
    return result;
}

#if PY_VERSION_HEX >= 0x03070000
/* run(done=None): `done` by position or by name, as the Python run takes it. */
static PyObject *
runner_run(RunnerCore *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    Py_ssize_t nkwargs = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);

    if (nargs + nkwargs > 1) {
        PyErr_Format(PyExc_TypeError, "run() takes at most 1 argument (%zd given)",
                     nargs + nkwargs);
        return NULL;
    }
    if (nkwargs == 1 &&
        !(PyUnicode_Check(PyTuple_GET_ITEM(kwnames, 0)) &&
          PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "done") == 0)) {
        PyErr_Format(PyExc_TypeError, "run() got an unexpected keyword argument '%S'",
                     PyTuple_GET_ITEM(kwnames, 0));
        return NULL;
    }
    return runner_run_done(self, nargs + nkwargs == 1 ? args[0] : NULL);
}
#define RUNNER_RUN_FLAGS (METH_FASTCALL | METH_KEYWORDS)
#else
static PyObject *
runner_run(RunnerCore *self, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"done", NULL};
    PyObject *done = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:run", keywords, &done))
        return NULL;
    return runner_run_done(self, done);
}
#define RUNNER_RUN_FLAGS (METH_VARARGS | METH_KEYWORDS)
#endif

/* gen._start_runner: the Future of a coroutine whose generator `gen` first yielded
 * `yielded`, with the Runner that drives it on. */
static PyObject *
start_runner(PyObject *gen, PyObject *yielded)
{
    PyObject *future, *loop, *result;
    RunnerCore *runner;
    int taken;

    future = PyObject_CallObject(future_class, NULL);
    if (future == NULL)
        return NULL;
    /* Stored though they equal the class defaults, as gen._start_runner explains. */
    if (PyObject_SetAttr(future, str_state, pending_state) < 0 ||
        PyObject_SetAttr(future, str_callbacks, Py_None) < 0 ||
        PyObject_SetAttr(future, str_exc_info, Py_None) < 0) {
        Py_DECREF(future);
        return NULL;
    }
    /* Allocated without tp_new and __init__, which do nothing more for this class. */
    runner = (RunnerCore *)runner_class->tp_alloc(runner_class, 0);
    if (runner == NULL) {
        Py_DECREF(future);
        return NULL;
    }
    Py_INCREF(gen);
    runner->gen = gen;
    Py_INCREF(future);
    runner->result_future = future;
    /* IOLoop.current() without its call when this thread has a loop. */
    loop = PyObject_GetAttr(thread_state, str_instance);
    if (loop == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError))
            goto error;
        PyErr_Clear();
    }
    if (loop == NULL || loop == Py_None) {
        Py_XDECREF(loop);
        loop = PyObject_CallObject(current_loop, NULL);
        if (loop == NULL)
            goto error;
    }
    runner->io_loop = loop;
    /* The Runner is the Future's canceller: see gen.Runner.__call__. */
    if (PyObject_SetAttr(future, str_canceller, (PyObject *)runner) < 0)
        goto error;
    Py_INCREF(yielded);
    taken = take_yielded(runner, yielded);
    if (taken < 0)
        goto error;
    if (taken) {
        result = runner_run_done(runner, NULL);
        if (result == NULL)
            goto error;
        Py_DECREF(result);
    }
    Py_DECREF(runner);
    return future;
error:
    Py_DECREF(runner);
    Py_DECREF(future);
    return NULL;
}

static int
runner_traverse(RunnerCore *self, visitproc visit, void *arg)
{
    Py_VISIT(self->gen);
    Py_VISIT(self->result_future);
    Py_VISIT(self->future);
    Py_VISIT(self->io_loop);
    return 0;
}

static int
runner_clear(RunnerCore *self)
{
    Py_CLEAR(self->gen);
    Py_CLEAR(self->result_future);
    Py_CLEAR(self->future);
    Py_CLEAR(self->io_loop);
    return 0;
}

static void
runner_dealloc(RunnerCore *self)
{
    PyObject_GC_UnTrack(self);
    runner_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMemberDef runner_members[] = {
    {"gen", T_OBJECT, offsetof(RunnerCore, gen), 0, NULL},
    {"result_future", T_OBJECT, offsetof(RunnerCore, result_future), 0, NULL},
    {"future", T_OBJECT, offsetof(RunnerCore, future), 0, NULL},
    {"io_loop", T_OBJECT, offsetof(RunnerCore, io_loop), 0, NULL},
    {"running", T_BOOL, offsetof(RunnerCore, running), 0, NULL},
    {"must_cancel", T_BOOL, offsetof(RunnerCore, must_cancel), 0, NULL},
    {"return_depth", T_PYSSIZET, offsetof(RunnerCore, return_depth), 0, NULL},
    {NULL}
};

static PyMethodDef runner_methods[] = {
    {"run", (PyCFunction)(void (*)(void))runner_run, RUNNER_RUN_FLAGS,
     "run(done=None): as gen._PythonRunner.run."},
    {NULL}
};

static PyTypeObject RunnerCoreType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    "tinytornado._speedups.RunnerCore",
    sizeof(RunnerCore),
};

/* ---- The wrapper: gen._python_wrapper, in C ---- */

/* What the call of a decorated function gives: the function's result turned into the
 * coroutine's Future (`result` is a new reference, or NULL with an error set). */
static PyObject *
coroutine_future(PyObject *result)
{
    PyObject *yielded, *future;

    if (result == NULL)
        return future_from_error();
    if (!PyGen_CheckExact(result)) {
        future = resolved_future(result);
        Py_DECREF(result);
        return future;
    }
    switch (send_into(result, Py_None, &yielded)) {
    case 1:
        future = start_runner(result, yielded);
        Py_DECREF(yielded);
        Py_DECREF(result);
        return future != NULL ? future : future_from_error();
    case 0:  /* It ended at once. */
        Py_DECREF(result);
        future = resolved_future(yielded);
        Py_DECREF(yielded);
        return future;
    default:
        Py_DECREF(result);
        return future_from_error();
    }
}

static PyObject *
cf_call(CoroutineFunction *self, PyObject *args, PyObject *kwargs)
{
    return coroutine_future(PyObject_Call(self->func, args, kwargs));
}

#if PY_VERSION_HEX >= 0x03090000
static PyObject *
cf_vectorcall(CoroutineFunction *self, PyObject *const *args, size_t nargsf,
              PyObject *kwnames)
{
    return coroutine_future(PyObject_Vectorcall(self->func, args, nargsf, kwnames));
}
#endif

static PyObject *
cf_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *func;
    CoroutineFunction *self;

    if (future_class == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "tinytornado._speedups is not configured");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "O:CoroutineFunction", &func))
        return NULL;
    if (!PyCallable_Check(func)) {
        PyErr_SetString(PyExc_TypeError, "CoroutineFunction() needs a callable");
        return NULL;
    }
    self = (CoroutineFunction *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    Py_INCREF(func);
    self->func = func;
#if PY_VERSION_HEX >= 0x03090000
    self->vectorcall = (vectorcallfunc)cf_vectorcall;
#endif
    return (PyObject *)self;
}

static int
cf_traverse(CoroutineFunction *self, visitproc visit, void *arg)
{
    Py_VISIT(self->func);
    Py_VISIT(self->dict);
    return 0;
}

static int
cf_clear(CoroutineFunction *self)
{
    Py_CLEAR(self->func);
    Py_CLEAR(self->dict);
    return 0;
}

static void
cf_dealloc(CoroutineFunction *self)
{
    PyObject_GC_UnTrack(self);
    if (self->weakreflist != NULL)
        PyObject_ClearWeakRefs((PyObject *)self);
    cf_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Bound like a function: to an instance it makes a method; from the class, itself. */
static PyObject *
cf_descr_get(PyObject *self, PyObject *obj, PyObject *type)
{
    if (obj == NULL || obj == Py_None) {
        Py_INCREF(self);
        return self;
    }
#if PY_MAJOR_VERSION >= 3
    return PyMethod_New(self, obj);
#else
    return PyMethod_New(self, obj, type);
#endif
}

static PyObject *
cf_repr(CoroutineFunction *self)
{
#if PY_MAJOR_VERSION >= 3
    return PyUnicode_FromFormat("<coroutine function %R>", self->func);
#else
    PyObject *func_repr = PyObject_Repr(self->func), *text;
    if (func_repr == NULL)
        return NULL;
    text = PyString_FromFormat("<coroutine function %s>", PyString_AS_STRING(func_repr));
    Py_DECREF(func_repr);
    return text;
#endif
}

static PyObject *
cf_get_dict(CoroutineFunction *self, void *closure)
{
    if (self->dict == NULL && (self->dict = PyDict_New()) == NULL)
        return NULL;
    Py_INCREF(self->dict);
    return self->dict;
}

static int
cf_set_dict(CoroutineFunction *self, PyObject *value, void *closure)
{
    if (value == NULL || !PyDict_Check(value)) {
        PyErr_SetString(PyExc_TypeError, "__dict__ must be set to a dict");
        return -1;
    }
    Py_INCREF(value);
    Py_XSETREF(self->dict, value);
    return 0;
}

/* Pickled by name, as a module-level function is (functools.wraps sets __qualname__ and
 * __module__, so pickle finds the decorated function again). */
static PyObject *
cf_reduce(CoroutineFunction *self, PyObject *unused)
{
#if PY_MAJOR_VERSION >= 3
    return PyObject_GetAttrString((PyObject *)self, "__qualname__");
#else
    return PyObject_GetAttrString((PyObject *)self, "__name__");
#endif
}

static PyGetSetDef cf_getset[] = {
    {"__dict__", (getter)cf_get_dict, (setter)cf_set_dict, NULL, NULL},
    {NULL}
};

static PyMethodDef cf_methods[] = {
    {"__reduce__", (PyCFunction)cf_reduce, METH_NOARGS, NULL},
    {NULL}
};

static PyTypeObject CoroutineFunctionType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    "tinytornado._speedups.CoroutineFunction",
    sizeof(CoroutineFunction),
};

static PyObject *
configure(PyObject *module, PyObject *args)
{
    PyObject *objects[9];
    PyObject **targets[9] = {
        &future_class, &return_class, &pending_state, &finished_state, &moment, &resolved,
        &thread_state, &current_loop, (PyObject **)&runner_class,
    };
    Py_ssize_t depth;
    int i;

    if (!PyArg_ParseTuple(args, "OOOOOOOOOn:configure", &objects[0], &objects[1],
                          &objects[2], &objects[3], &objects[4], &objects[5], &objects[6],
                          &objects[7], &objects[8], &depth))
        return NULL;
    if (!PyType_Check(objects[8]) ||
        !PyType_IsSubtype((PyTypeObject *)objects[8], &RunnerCoreType)) {
        PyErr_SetString(PyExc_TypeError, "configure() needs a subclass of RunnerCore");
        return NULL;
    }
    for (i = 0; i < 9; i++) {
        Py_INCREF(objects[i]);
        Py_XSETREF(*targets[i], objects[i]);
    }
    max_return_depth = depth;
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"configure", configure, METH_VARARGS,
     "configure(Future, Return, PENDING, FINISHED, moment, resolved, thread_state, "
     "current_loop, runner_class, max_return_depth): what the wrapper and the Runner "
     "build with."},
    {NULL}
};

static int
intern_names(void)
{
    struct { PyObject **target; const char *name; } names[] = {
        {&str_result, "_result"}, {&str_state, "_state"}, {&str_exc_info, "_exc_info"},
        {&str_set_exc_info, "set_exc_info"}, {&str_value, "value"},
        {&str_callbacks, "_callbacks"}, {&str_canceller, "_canceller"},
        {&str_return_depth, "_return_depth"}, {&str_run, "run"},
        {&str_add_callback, "add_callback"}, {&str_cancel, "cancel"},
        {&str_append, "append"}, {&str_deliver, "_deliver"},
        {&str_handle_yield, "handle_yield"}, {&str_fail, "_fail"},
        {&str_run_callbacks, "_run_callbacks"}, {&str_instance, "instance"},
        {&str_send, "send"},
    };
    size_t i;

    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
#if PY_MAJOR_VERSION >= 3
        *names[i].target = PyUnicode_InternFromString(names[i].name);
#else
        *names[i].target = PyString_InternFromString(names[i].name);
#endif
        if (*names[i].target == NULL)
            return 0;
    }
    return 1;
}

static int
ready_types(void)
{
    CoroutineFunctionType.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC
#if PY_VERSION_HEX >= 0x03090000
        | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR
#endif
        ;
    CoroutineFunctionType.tp_doc = "A gen.coroutine-decorated function (C wrapper).";
    CoroutineFunctionType.tp_new = cf_new;
    CoroutineFunctionType.tp_dealloc = (destructor)cf_dealloc;
    CoroutineFunctionType.tp_traverse = (traverseproc)cf_traverse;
    CoroutineFunctionType.tp_clear = (inquiry)cf_clear;
    CoroutineFunctionType.tp_call = (ternaryfunc)cf_call;
    CoroutineFunctionType.tp_descr_get = cf_descr_get;
    CoroutineFunctionType.tp_repr = (reprfunc)cf_repr;
    CoroutineFunctionType.tp_getset = cf_getset;
    CoroutineFunctionType.tp_methods = cf_methods;
    CoroutineFunctionType.tp_dictoffset = offsetof(CoroutineFunction, dict);
    CoroutineFunctionType.tp_weaklistoffset = offsetof(CoroutineFunction, weakreflist);
#if PY_VERSION_HEX >= 0x03090000
    CoroutineFunctionType.tp_vectorcall_offset = offsetof(CoroutineFunction, vectorcall);
#endif
    RunnerCoreType.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC;
    RunnerCoreType.tp_doc = "The fields and run() of gen's C Runner (gen.Runner has the rest).";
    RunnerCoreType.tp_new = PyType_GenericNew;
    RunnerCoreType.tp_dealloc = (destructor)runner_dealloc;
    RunnerCoreType.tp_traverse = (traverseproc)runner_traverse;
    RunnerCoreType.tp_clear = (inquiry)runner_clear;
    RunnerCoreType.tp_members = runner_members;
    RunnerCoreType.tp_methods = runner_methods;
    if (PyType_Ready(&CoroutineFunctionType) < 0 || PyType_Ready(&RunnerCoreType) < 0)
        return -1;
    return 0;
}

/* Adds the two types to `module`; -1 on failure. */
static int
add_types(PyObject *module)
{
    Py_INCREF(&CoroutineFunctionType);
    if (PyModule_AddObject(module, "CoroutineFunction",
                           (PyObject *)&CoroutineFunctionType) < 0) {
        Py_DECREF(&CoroutineFunctionType);
        return -1;
    }
    Py_INCREF(&RunnerCoreType);
    if (PyModule_AddObject(module, "RunnerCore", (PyObject *)&RunnerCoreType) < 0) {
        Py_DECREF(&RunnerCoreType);
        return -1;
    }
    return 0;
}

#if PY_MAJOR_VERSION >= 3
static struct PyModuleDef speedups_module = {
    PyModuleDef_HEAD_INIT, "tinytornado._speedups", NULL, -1, module_methods,
};

PyMODINIT_FUNC
PyInit__speedups(void)
{
    PyObject *module;
    if (!intern_names() || ready_types() < 0)
        return NULL;
    module = PyModule_Create(&speedups_module);
    if (module == NULL)
        return NULL;
    if (add_types(module) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
#else
PyMODINIT_FUNC
init_speedups(void)
{
    PyObject *module;
    if (!intern_names() || ready_types() < 0)
        return;
    module = Py_InitModule("tinytornado._speedups", module_methods);
    if (module != NULL)
        add_types(module);
}
#endif
