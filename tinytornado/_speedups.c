/* Optional C speedups for gen.py's coroutines (gen.py's docstring tells where they fit),
 * and for the loop's clock on Python 2.7.
 *
 * CoroutineFunction is gen.coroutine's wrapper, the twin of gen._python_wrapper (which
 * runs when this module is not built or TINYTORNADO_EXTENSION=0) with the same behaviour
 * (the tests run both). A call of a coroutine function mostly ends at once or at its
 * first yield: here the call, the generator's first step and the catch of Return run
 * without a Python frame of their own, and so do the steps after yields of Futures that
 * have succeeded already (their results sent back in, as gen._python_wrapper does: a
 * coroutine that ends so makes no Python frame but its own). It keeps no state: at the
 * first yield of anything else the generator is handed to gen._start_runner, and the
 * rest (failures thrown in, the Runner) is gen.py's alone (issue 19: a C copy of the
 * Runner's loop drifted from it).
 *
 * AddCallback is PollIOLoop's add_callback for a call given no keyword: Tornado 5.1 lets
 * add_callback take keywords for the callback, and a Python method with **kwargs makes
 * an empty dict at every call (3.11: about 230 instructions, 4% of a callback's whole
 * cost in the loop). Calling a Python method without **kwargs from C instead saves
 * nothing on 3.11, which enters the interpreter again for it (measured: -28): the call
 * is queued here, without a frame. A call given keywords goes to the Python method.
 *
 * monotonic() exists on 2.7 only, which has no time.monotonic: _compat takes it before
 * _clock's ctypes call (about 1 us a reading, where the loop reads the clock at each
 * pass and at each timer it sets).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pythread.h>  /* PyThread_get_thread_ident: 2.7's Python.h leaves it out */
#include <structmember.h>  /* PyMemberDef */
#include <stddef.h>  /* offsetof */
#include <time.h>  /* clock_gettime */

#if PY_MAJOR_VERSION >= 3
#define is_text(obj) PyUnicode_Check(obj)
#else
#define is_text(obj) (PyString_Check(obj) || PyUnicode_Check(obj))
#endif

#ifndef Py_XSETREF  /* 2.7 */
#define Py_XSETREF(target, value) \
    do { PyObject *_old = (PyObject *)(target); (target) = (value); Py_XDECREF(_old); } while (0)
#endif

/* What gen.py hands over once, through configure(). A Future's fields are _kernel.py's:
 * this module sets them only as _kernel.DONE_FUTURE_FIELDS says, and knows no other. */
static PyObject *future_class;    /* _kernel.Future */
static PyObject *result_field;    /* The attribute a done Future's result goes in... */
static PyObject *done_fields;     /* ...and the (attribute, value) pairs set besides. */
static PyObject *not_done, *failed;  /* The result field's values without a result. */
static PyObject *return_class;    /* gen.Return */
static PyObject *start_runner;    /* gen._start_runner(gen, first_yielded) -> Future */
static PyObject *call_with_callback;  /* gen._call_with_callback: a legacy callback= */

static PyObject *str_set_exc_info, *str_callback, *str_send;

typedef struct {
    PyObject_HEAD
    PyObject *func;
    PyObject *dict;
    PyObject *weakreflist;
#if PY_VERSION_HEX >= 0x03090000
    vectorcallfunc vectorcall;
#endif
} CoroutineFunction;

/* A Future already resolved with `value` (a new reference), as _kernel.done_future
 * makes it: no callback can have been added yet, so no set_result bookkeeping. */
static PyObject *
resolved_future(PyObject *value)
{
    Py_ssize_t i;
    PyObject *pair, *future = PyObject_CallObject(future_class, NULL);

    if (future == NULL)
        return NULL;
    if (PyObject_SetAttr(future, result_field, value) < 0)
        goto error;
    for (i = 0; i < PyTuple_GET_SIZE(done_fields); i++) {
        pair = PyTuple_GET_ITEM(done_fields, i);
        if (PyObject_SetAttr(future, PyTuple_GET_ITEM(pair, 0), PyTuple_GET_ITEM(pair, 1)) < 0)
            goto error;
    }
    return future;
error:
    Py_DECREF(future);
    return NULL;
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
    /* The only argument, as gen.py reads it for both: Return.value is a property over
     * it, and StopIteration's value is its first argument. */
    args = ((PyBaseExceptionObject *)exc)->args;
    *value = (args != NULL && PyTuple_GET_SIZE(args) > 0)
        ? PyTuple_GET_ITEM(args, 0) : Py_None;
    Py_INCREF(*value);
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
        result = PyObject_CallMethodObjArgs(future, str_set_exc_info, exc_info, NULL);
        if (result == NULL)
            Py_CLEAR(future);
        Py_XDECREF(result);
    }
    Py_DECREF(exc_info);
    return future;
}

/* ---- The wrapper: gen._python_wrapper, in C ---- */

/* The generator's first step, next(gen): 1 with *yielded what it yielded; 0 with *yielded
 * what it returned, when that needs no StopIteration (3.10's PyIter_Send, or a bare
 * return before it); -1 with the error set, StopIteration or Return among them. */
static int
first_step(PyObject *gen, PyObject **yielded)
{
#if PY_VERSION_HEX >= 0x030A0000
    switch (PyIter_Send(gen, Py_None, yielded)) {
    case PYGEN_NEXT:
        return 1;
    case PYGEN_RETURN:
        return 0;
    default:
        return -1;
    }
#else
    *yielded = Py_TYPE(gen)->tp_iternext(gen);
    if (*yielded != NULL)
        return 1;
    if (PyErr_Occurred())
        return -1;
    Py_INCREF(Py_None);
    *yielded = Py_None;
    return 0;
#endif
}

/* gen._python_wrapper's loop over Futures that have succeeded: while `gen` yields
 * one (*yielded, a reference this owns), its result is sent back in. Gives what
 * first_step gives for the step it stopped at; with 1, *yielded is what goes to
 * gen._start_runner (a Future pending or failed, or anything else), and with -1 it is
 * NULL. */
static int
send_while_succeeded(PyObject *gen, PyObject **yielded)
{
    PyObject *result;

    while ((PyObject *)Py_TYPE(*yielded) == future_class) {
        result = PyObject_GetAttr(*yielded, result_field);
        if (result == NULL) {
            Py_CLEAR(*yielded);
            return -1;
        }
        if (result == not_done || result == failed) {
            Py_DECREF(result);
            return 1;
        }
        Py_DECREF(*yielded);
#if PY_VERSION_HEX >= 0x030A0000
        switch (PyIter_Send(gen, result, yielded)) {
        case PYGEN_NEXT:
            break;
        case PYGEN_RETURN:
            Py_DECREF(result);
            return 0;
        default:
            *yielded = NULL;
            Py_DECREF(result);
            return -1;
        }
#else
        *yielded = PyObject_CallMethodObjArgs(gen, str_send, result, NULL);
        if (*yielded == NULL) {
            Py_DECREF(result);
            return -1;
        }
#endif
        Py_DECREF(result);
    }
    return 1;
}

/* gen._start_runner(gen, yielded): the Future of a generator that waits. */
static PyObject *
call_start_runner(PyObject *gen, PyObject *yielded)
{
#if PY_VERSION_HEX >= 0x03090000
    PyObject *args[2] = {gen, yielded};
    return PyObject_Vectorcall(start_runner, args, 2, NULL);
#else
    return PyObject_CallFunctionObjArgs(start_runner, gen, yielded, NULL);
#endif
}

/* What the call of a decorated function gives: the function's result turned into the
 * coroutine's Future (`result` is a new reference, or NULL with an error set). */
static PyObject *
coroutine_future(PyObject *result)
{
    PyObject *yielded, *future;
    int status;

    if (result == NULL)
        return future_from_error();
    if (!PyGen_CheckExact(result)) {
        future = resolved_future(result);
        Py_DECREF(result);
        return future;
    }
    status = first_step(result, &yielded);
    if (status == 1)
        status = send_while_succeeded(result, &yielded);
    switch (status) {
    case 1:
        future = call_start_runner(result, yielded);
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

/* gen._call_with_callback(self, args, kwargs, 2): 2 frames up from it is the caller's,
 * as this wrapper makes none. */
static PyObject *
call_back_later(CoroutineFunction *self, PyObject *args, PyObject *kwargs)
{
    return PyObject_CallFunction(call_with_callback, "OOOi", (PyObject *)self, args,
                                 kwargs, 2);
}

/* Whether a call's keywords (a dict) hold Tornado's legacy `callback`. -1 on error. */
static int
has_callback(PyObject *kwargs)
{
    if (kwargs == NULL || PyDict_Size(kwargs) == 0)
        return 0;
#if PY_MAJOR_VERSION >= 3
    if (PyDict_GetItemWithError(kwargs, str_callback) != NULL)
        return 1;
    return PyErr_Occurred() ? -1 : 0;
#else
    return PyDict_GetItem(kwargs, str_callback) != NULL;
#endif
}

static PyObject *
cf_call(CoroutineFunction *self, PyObject *args, PyObject *kwargs)
{
    switch (has_callback(kwargs)) {
    case 0:
        return coroutine_future(PyObject_Call(self->func, args, kwargs));
    case 1:
        return call_back_later(self, args, kwargs);
    default:
        return NULL;
    }
}

#if PY_VERSION_HEX >= 0x03090000
/* Whether the keyword names of a vectorcall hold Tornado's legacy `callback`. */
static int
names_callback(PyObject *kwnames)
{
    Py_ssize_t i;
    PyObject *name;

    for (i = 0; i < PyTuple_GET_SIZE(kwnames); i++) {
        name = PyTuple_GET_ITEM(kwnames, i);
        if (name == str_callback || PyUnicode_Compare(name, str_callback) == 0)
            return 1;
    }
    return 0;
}

/* A vectorcall's arguments as the (args, kwargs) of a call, for call_back_later. */
static PyObject *
call_back_later_vector(CoroutineFunction *self, PyObject *const *args, Py_ssize_t nargs,
                       PyObject *kwnames)
{
    PyObject *tuple, *kwargs, *result = NULL;
    Py_ssize_t i;

    tuple = PyTuple_New(nargs);
    kwargs = PyDict_New();
    if (tuple == NULL || kwargs == NULL)
        goto done;
    for (i = 0; i < nargs; i++) {
        Py_INCREF(args[i]);
        PyTuple_SET_ITEM(tuple, i, args[i]);
    }
    for (i = 0; i < PyTuple_GET_SIZE(kwnames); i++) {
        if (PyDict_SetItem(kwargs, PyTuple_GET_ITEM(kwnames, i), args[nargs + i]) < 0)
            goto done;
    }
    result = call_back_later(self, tuple, kwargs);
done:
    Py_XDECREF(tuple);
    Py_XDECREF(kwargs);
    return result;
}

static PyObject *
cf_vectorcall(CoroutineFunction *self, PyObject *const *args, size_t nargsf,
              PyObject *kwnames)
{
    /* Only a call with keywords pays for the look for a legacy callback. */
    if (kwnames != NULL && names_callback(kwnames))
        return call_back_later_vector(self, args, PyVectorcall_NARGS(nargsf), kwnames);
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

/* AddCallback(keyworded): PollIOLoop's add_callback (and _call_soon), the twin of
 * ioloop.PollIOLoop._call_soon for a call given no keyword; a call given any goes to
 * `keyworded`, the Python add_callback, as does a call it cannot take (too few
 * arguments), so that its errors are Python's. Keep the two in step: the loop's
 * attributes read here are _callbacks (a deque), _thread_ident and _waker. */
typedef struct {
    PyObject_HEAD
    PyObject *keyworded;
#if PY_VERSION_HEX >= 0x03090000
    vectorcallfunc vectorcall;
#endif
} AddCallback;

static PyObject *partial_class;  /* functools.partial */
static PyObject *str_append, *str_callbacks, *str_thread_ident, *str_waker, *str_wake;

/* Whether `loop`'s thread is this one (its _thread_ident as get_ident() gives it). */
static int
on_loop_thread(PyObject *loop)
{
    PyObject *ident;
    int same;

    ident = PyObject_GetAttr(loop, str_thread_ident);
    if (ident == NULL)
        return -1;
    if (ident == Py_None) {
        Py_DECREF(ident);
        return 0;
    }
    /* Compared as numbers, not as a new int object per call; masked, as get_ident()
     * reads the same ident signed on 2.7 and 3.6, unsigned from 3.7. */
#if PY_MAJOR_VERSION >= 3
    same = PyLong_AsUnsignedLongMask(ident) == (unsigned long)PyThread_get_thread_ident();
#else
    same = PyInt_AsUnsignedLongMask(ident) == (unsigned long)PyThread_get_thread_ident();
#endif
    Py_DECREF(ident);
    if (PyErr_Occurred())
        return -1;
    return same;
}

/* Queue `call` (a new reference, stolen) on `loop`; wake its poll from another thread. */
static PyObject *
queue_callback(PyObject *loop, PyObject *call)
{
    PyObject *queue, *result, *waker;
    int same_thread;

    if (call == NULL)
        return NULL;
    queue = PyObject_GetAttr(loop, str_callbacks);
    if (queue == NULL) {
        Py_DECREF(call);
        return NULL;
    }
#if PY_VERSION_HEX >= 0x03090000
    result = PyObject_CallMethodOneArg(queue, str_append, call);
#else
    result = PyObject_CallMethodObjArgs(queue, str_append, call, NULL);
#endif
    Py_DECREF(queue);
    Py_DECREF(call);
    if (result == NULL)
        return NULL;
    Py_DECREF(result);
    same_thread = on_loop_thread(loop);
    if (same_thread < 0)
        return NULL;
    if (!same_thread) {
        waker = PyObject_GetAttr(loop, str_waker);
        if (waker == NULL)
            return NULL;
        result = PyObject_CallMethodObjArgs(waker, str_wake, NULL);
        Py_DECREF(waker);
        if (result == NULL)
            return NULL;
        Py_DECREF(result);
    }
    Py_RETURN_NONE;
}

static PyObject *
ac_call(AddCallback *self, PyObject *args, PyObject *kwargs)
{
    Py_ssize_t nargs = PyTuple_GET_SIZE(args);
    PyObject *call, *bound;

    if ((kwargs != NULL && PyDict_Size(kwargs) != 0) || nargs < 2)
        return PyObject_Call(self->keyworded, args, kwargs);
    if (nargs == 2) {
        call = PyTuple_GET_ITEM(args, 1);
        Py_INCREF(call);
    } else {
        bound = PyTuple_GetSlice(args, 1, nargs);  /* callback, *args */
        if (bound == NULL)
            return NULL;
        call = PyObject_Call(partial_class, bound, NULL);
        Py_DECREF(bound);
    }
    return queue_callback(PyTuple_GET_ITEM(args, 0), call);
}

#if PY_VERSION_HEX >= 0x03090000
static PyObject *
ac_vectorcall(AddCallback *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    PyObject *call;

    if ((kwnames != NULL && PyTuple_GET_SIZE(kwnames) != 0) || nargs < 2)
        return PyObject_Vectorcall(self->keyworded, args, nargsf, kwnames);
    if (nargs == 2) {
        call = args[1];
        Py_INCREF(call);
    } else {
        call = PyObject_Vectorcall(partial_class, args + 1, nargs - 1, NULL);
    }
    return queue_callback(args[0], call);
}
#endif

static PyObject *
ac_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *keyworded;
    AddCallback *self;

    if (partial_class == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "tinytornado._speedups did not find functools");
        return NULL;
    }
    if (kwargs != NULL && PyDict_Size(kwargs) != 0) {
        PyErr_SetString(PyExc_TypeError, "AddCallback() takes no keyword arguments");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "O:AddCallback", &keyworded))
        return NULL;
    if (!PyCallable_Check(keyworded)) {
        PyErr_SetString(PyExc_TypeError, "AddCallback() needs a callable");
        return NULL;
    }
    self = (AddCallback *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    Py_INCREF(keyworded);
    self->keyworded = keyworded;
#if PY_VERSION_HEX >= 0x03090000
    self->vectorcall = (vectorcallfunc)ac_vectorcall;
#endif
    return (PyObject *)self;
}

static int
ac_traverse(AddCallback *self, visitproc visit, void *arg)
{
    Py_VISIT(self->keyworded);
    return 0;
}

static int
ac_clear(AddCallback *self)
{
    Py_CLEAR(self->keyworded);
    return 0;
}

static void
ac_dealloc(AddCallback *self)
{
    PyObject_GC_UnTrack(self);
    ac_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Its name and docstring are the Python add_callback's. */
static PyObject *
ac_get_name(AddCallback *self, void *closure)
{
    return PyObject_GetAttrString(self->keyworded, "__name__");
}

static PyObject *
ac_get_doc(AddCallback *self, void *closure)
{
    return PyObject_GetAttrString(self->keyworded, "__doc__");
}

static PyMemberDef ac_members[] = {
    {"keyworded", T_OBJECT, offsetof(AddCallback, keyworded), READONLY, NULL},
    {NULL}
};

static PyGetSetDef ac_getset[] = {
    {"__name__", (getter)ac_get_name, NULL, NULL, NULL},
    {"__doc__", (getter)ac_get_doc, NULL, NULL, NULL},
    {NULL}
};

static PyTypeObject AddCallbackType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    "tinytornado._speedups.AddCallback",
    sizeof(AddCallback),
};

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

/* Whether `fields` is (name, ((name, value), ...)), names being strings. */
static int
valid_done_fields(PyObject *fields)
{
    Py_ssize_t i;
    PyObject *pairs, *pair;

    if (!PyTuple_Check(fields) || PyTuple_GET_SIZE(fields) != 2 ||
        !is_text(PyTuple_GET_ITEM(fields, 0)) ||
        !PyTuple_Check(pairs = PyTuple_GET_ITEM(fields, 1)))
        return 0;
    for (i = 0; i < PyTuple_GET_SIZE(pairs); i++) {
        pair = PyTuple_GET_ITEM(pairs, i);
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2 ||
            !is_text(PyTuple_GET_ITEM(pair, 0)))
            return 0;
    }
    return 1;
}

static PyObject *
configure(PyObject *module, PyObject *args)
{
    PyObject *future, *fields, *no_result, *failure, *ret, *start, *with_callback;

    if (!PyArg_ParseTuple(args, "OOOOOOO:configure", &future, &fields, &no_result,
                          &failure, &ret, &start, &with_callback))
        return NULL;
    if (!valid_done_fields(fields)) {
        PyErr_SetString(PyExc_TypeError, "configure() needs the done-Future fields as "
                        "(name, ((name, value), ...))");
        return NULL;
    }
    Py_INCREF(future);
    Py_XSETREF(future_class, future);
    Py_INCREF(PyTuple_GET_ITEM(fields, 0));
    Py_XSETREF(result_field, PyTuple_GET_ITEM(fields, 0));
    Py_INCREF(PyTuple_GET_ITEM(fields, 1));
    Py_XSETREF(done_fields, PyTuple_GET_ITEM(fields, 1));
    Py_INCREF(no_result);
    Py_XSETREF(not_done, no_result);
    Py_INCREF(failure);
    Py_XSETREF(failed, failure);
    Py_INCREF(ret);
    Py_XSETREF(return_class, ret);
    Py_INCREF(start);
    Py_XSETREF(start_runner, start);
    Py_INCREF(with_callback);
    Py_XSETREF(call_with_callback, with_callback);
    Py_RETURN_NONE;
}

#if PY_MAJOR_VERSION < 3 && defined(CLOCK_MONOTONIC)
#define HAVE_MONOTONIC 1
static PyObject *
monotonic(PyObject *self, PyObject *unused)
{
    struct timespec now;
    if (clock_gettime(CLOCK_MONOTONIC, &now) != 0)
        return PyErr_SetFromErrno(PyExc_OSError);
    return PyFloat_FromDouble(now.tv_sec + now.tv_nsec * 1e-9);
}
#endif

static PyMethodDef module_methods[] = {
    {"configure", configure, METH_VARARGS,
     "configure(Future, done_future_fields, NOT_DONE, FAILED, Return, start_runner, "
     "call_with_callback): what the wrapper builds with (gen passes _kernel's)."},
#ifdef HAVE_MONOTONIC
    {"monotonic", monotonic, METH_NOARGS,
     "monotonic() -> CLOCK_MONOTONIC in float seconds (time.monotonic for 2.7)."},
#endif
    {NULL}
};

static int
intern_names(void)
{
    struct { PyObject **target; const char *name; } names[] = {
        {&str_set_exc_info, "set_exc_info"},
        {&str_callback, "callback"},
        {&str_send, "send"},
        {&str_append, "append"},
        {&str_callbacks, "_callbacks"},
        {&str_thread_ident, "_thread_ident"},
        {&str_waker, "_waker"},
        {&str_wake, "wake"},
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

/* functools.partial, which binds a callback's arguments as the Python add_callback does. */
static int
load_partial(void)
{
    PyObject *functools = PyImport_ImportModule("functools");
    if (functools == NULL)
        return 0;
    partial_class = PyObject_GetAttrString(functools, "partial");
    Py_DECREF(functools);
    return partial_class != NULL;
}

static int
ready_type(void)
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
    if (PyType_Ready(&CoroutineFunctionType) < 0)
        return -1;

    AddCallbackType.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC
#if PY_VERSION_HEX >= 0x03090000
        | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR
#endif
        ;
    AddCallbackType.tp_new = ac_new;
    AddCallbackType.tp_dealloc = (destructor)ac_dealloc;
    AddCallbackType.tp_traverse = (traverseproc)ac_traverse;
    AddCallbackType.tp_clear = (inquiry)ac_clear;
    AddCallbackType.tp_call = (ternaryfunc)ac_call;
    AddCallbackType.tp_descr_get = cf_descr_get;  /* Bound as a function is, too. */
    AddCallbackType.tp_members = ac_members;
    AddCallbackType.tp_getset = ac_getset;
#if PY_VERSION_HEX >= 0x03090000
    AddCallbackType.tp_vectorcall_offset = offsetof(AddCallback, vectorcall);
#endif
    return PyType_Ready(&AddCallbackType);
}

/* Adds `type` to `module` as `name`; -1 on failure. */
static int
add_type(PyObject *module, const char *name, PyTypeObject *type)
{
    Py_INCREF(type);
    if (PyModule_AddObject(module, name, (PyObject *)type) < 0) {
        Py_DECREF(type);
        return -1;
    }
    return 0;
}

static int
add_types(PyObject *module)
{
    if (add_type(module, "CoroutineFunction", &CoroutineFunctionType) < 0)
        return -1;
    return add_type(module, "AddCallback", &AddCallbackType);
}

#if PY_MAJOR_VERSION >= 3
static struct PyModuleDef speedups_module = {
    PyModuleDef_HEAD_INIT, "tinytornado._speedups", NULL, -1, module_methods,
};

PyMODINIT_FUNC
PyInit__speedups(void)
{
    PyObject *module;
    if (!intern_names() || !load_partial() || ready_type() < 0)
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
    if (!intern_names() || !load_partial() || ready_type() < 0)
        return;
    module = Py_InitModule("tinytornado._speedups", module_methods);
    if (module != NULL)
        add_types(module);
}
#endif
